package compare_test

import (
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/compare"
	. "github.com/tsinspect/tsinspect/timeline/compare/comparetest"
)

func side(s *timeline.Session) compare.Side { return compare.Side{Session: s} }

func echoSteps() []Step {
	return []Step{Search("select:mcp__demo__echo", "mcp__demo__echo"), Call("mcp__demo__echo"), Done("It answered hello.")}
}

// rows lists the rows of the main thread as "op a/b (count)".
func rows(d *compare.Diff) []compare.Row {
	for _, th := range d.Threads {
		if th.Kind == timeline.KindMain {
			return th.Rows
		}
	}
	return nil
}

func TestSameScenarioIsSame(t *testing.T) {
	a := Session(DefaultShape(), echoSteps()...)
	sh := DefaultShape()
	sh.IDSeed = 7 // other ids, times, billing token
	b := Session(sh, echoSteps()...)
	d := compare.Compare(side(a), side(b), compare.Options{})
	if !d.Same {
		t.Fatalf("not the same: shape %+v rows %+v summary %+v", d.Shape, rows(d), d.Summary)
	}
	if r := rows(d); len(r) != 1 || r[0].Op != compare.OpSame || r[0].Count != 3 {
		t.Errorf("rows %+v: want the three turns folded into one", r)
	}
}

func TestInsertedTurnAlignsAround(t *testing.T) {
	a := Session(DefaultShape(), echoSteps()...)
	steps := echoSteps()
	steps = append(steps[:1], append([]Step{Search("weather forecast")}, steps[1:]...)...)
	b := Session(DefaultShape(), steps...)
	d := compare.Compare(side(a), side(b), compare.Options{})
	if d.Same {
		t.Fatal("the same")
	}
	var ops []string
	for _, r := range rows(d) {
		ops = append(ops, r.Op)
	}
	got := strings.Join(ops, " ")
	// The last turns pair up; B's reads more from the cache, its history
	// being one turn longer.
	if got != "same inserted changed changed" {
		t.Fatalf("rows %s, want same inserted changed changed: %+v", got, rows(d))
	}
	if last := rows(d)[3]; last.AFirst != 3 || last.BFirst != 4 || len(last.Fields) != 1 || last.Fields[0].Name != "cache read" {
		t.Errorf("last row %+v: want A's 3 and B's 4, their cache reads apart", last)
	}
	ins := rows(d)[1]
	if ins.BFirst != 2 || !strings.Contains(ins.What, `ToolSearch "weather forecast"`) {
		t.Errorf("inserted row %+v: want B's turn 2, the weather search", ins)
	}
}

func TestOneSearchDiffers(t *testing.T) {
	a := Session(DefaultShape(), echoSteps()...)
	steps := echoSteps()
	steps[0] = Search("echo text", "mcp__demo__echo")
	b := Session(DefaultShape(), steps...)
	d := compare.Compare(side(a), side(b), compare.Options{Tools: func(n string) bool { return strings.HasPrefix(n, "mcp__demo__") }})
	if len(d.Shape) != 0 {
		t.Errorf("shape differs: %+v", d.Shape)
	}
	var fields []string
	for _, r := range rows(d) {
		for _, f := range r.Fields {
			fields = append(fields, f.Name+": "+f.A+" | "+f.B)
		}
	}
	want := []string{
		`calls: ToolSearch "select:mcp__demo__echo" | ToolSearch "echo text"`,
		`searches: select "select:mcp__demo__echo" → mcp__demo__echo | keyword "echo text" → mcp__demo__echo`,
	}
	if strings.Join(fields, "\n") != strings.Join(want, "\n") {
		t.Errorf("fields:\n%s\nwant:\n%s", strings.Join(fields, "\n"), strings.Join(want, "\n"))
	}
	var echo *compare.ToolDiff
	for i := range d.Tools {
		if d.Tools[i].Name == "mcp__demo__echo" {
			echo = &d.Tools[i]
		}
	}
	if echo == nil || !echo.Differs || echo.A.FoundBy[0] != "select:mcp__demo__echo" || echo.B.FoundBy[0] != "echo text" {
		t.Errorf("echo: %+v", echo)
	}
	for _, td := range d.Tools {
		if td.Name != "mcp__demo__echo" && td.Differs {
			t.Errorf("%s differs: %+v", td.Name, td)
		}
	}
}

func TestRequestShape(t *testing.T) {
	a := Session(DefaultShape(), echoSteps()...)
	sh := DefaultShape()
	sh.Version = "2.1.331"
	sh.Betas += ",context-1m-2025-08-07"
	sh.System += " Be brief."
	sh.Thinking = `{"type":"adaptive"}`
	sh.EchoDesc = "Echo the given text back, unchanged."
	b := Session(sh, echoSteps()...)
	d := compare.Compare(side(a), side(b), compare.Options{})
	var got []string
	for _, c := range d.Shape {
		got = append(got, strings.Join([]string{c.Area, c.Item, c.Op, c.A, c.B, c.Detail}, "|"))
	}
	want := []string{
		"client|client|changed|Claude Code 2.1.328|Claude Code 2.1.331|",
		"betas|context-1m-2025-08-07|added|||",
		"system|block 1|changed|||text +4 tokens ≈",
		"tools|mcp__demo__echo|changed|||description +8 tokens ≈",
		`params|thinking|changed|{"budget_tokens":4000,"type":"enabled"}|{"type":"adaptive"}|`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("shape:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestThreadOnlyOnOneSide(t *testing.T) {
	a := Session(DefaultShape(), echoSteps()...)
	empty := timeline.Build(nil)
	d := compare.Compare(side(a), side(empty), compare.Options{})
	if d.Same || len(d.Threads) != 1 {
		t.Fatalf("%+v", d)
	}
	r := d.Threads[0].Rows
	if len(r) != 1 || r[0].Op != compare.OpDeleted || r[0].Count != 3 || r[0].AFirst != 1 || r[0].ALast != 3 {
		t.Errorf("rows %+v: want one deleted row of three turns", r)
	}
}
