package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// ccusageVersion is the ccusage release .ci/run installs, with its native
// binary (@ccusage/ccusage-linux-x64).
const ccusageVersion = "20.0.24"

// ccusagePath finds ccusage: $TSINSPECT_CCUSAGE, else where .ci/run puts
// it (the native binary if there is one). It skips tb when there is none,
// or fails it when TSINSPECT_REQUIRE_CCUSAGE is set (as CI does).
func ccusagePath(tb testing.TB) string {
	kit.Skips.Short(tb, "ccusage")
	tb.Helper()
	if p := os.Getenv("TSINSPECT_CCUSAGE"); p != "" {
		return p
	}
	tools := os.Getenv("TSINSPECT_TOOLS")
	if tools == "" {
		home := os.Getenv("HOME")
		if home == "" {
			home = os.TempDir()
		}
		tools = filepath.Join(home, ".cache", "tsinspect-ci")
	}
	dir := filepath.Join(tools, "ccusage-"+ccusageVersion, "node_modules")
	for _, p := range []string{
		filepath.Join(dir, "@ccusage", "ccusage-linux-x64", "bin", "ccusage"),
		filepath.Join(dir, ".bin", "ccusage"),
	} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	msg := "ccusage not found under " + dir + ": npm install ccusage@" + ccusageVersion + " there (see .ci/run) or set TSINSPECT_CCUSAGE"
	if os.Getenv("TSINSPECT_REQUIRE_CCUSAGE") != "" {
		tb.Fatal(msg)
	}
	skipFor(tb, "ccusage "+ccusageVersion, installCcusage, msg+"; set TSINSPECT_REQUIRE_CCUSAGE=1 to make this a failure")
	return ""
}

// tokenTotals are a session's token totals.
type tokenTotals struct {
	Input, Output, CacheRead, CacheWrite int64
}

// checkTotalsAgainstCcusage checks that 'tsinspect sessions --json' gives
// each session under home/.claude/projects the same input, output,
// cache-read and cache-write totals as 'ccusage session --json' (which
// takes a message's usage once per message ID and request ID, across all
// files, and counts a session's subagent files in it).
func checkTotalsAgainstCcusage(t *testing.T, home string) {
	t.Helper()
	checkSessionsAgainstCcusage(t, home, nil)
	t.Run("ccusage-periods", func(t *testing.T) {
		for _, by := range []string{"day", "week", "month"} {
			checkPeriodsAgainstCcusage(t, home, by)
		}
	})
}

// checkSessionsAgainstCcusage is the per-session half of
// checkTotalsAgainstCcusage, less the sessions in skip (by ID, with why).
func checkSessionsAgainstCcusage(t *testing.T, home string, skip map[string]string) {
	t.Helper()
	t.Run("ccusage", func(t *testing.T) {
		cc := ccusagePath(t)
		cmd := exec.Command(cc, "session", "--json", "--offline")
		// ccusage reads every agent CLI's data it finds under HOME: give it
		// an empty one, and Claude Code's directory as its configuration.
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"))
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("ccusage session --json: %v\n%s", err, errb.String())
		}
		var cu struct {
			Session []struct {
				Period              string `json:"period"`
				InputTokens         int64  `json:"inputTokens"`
				OutputTokens        int64  `json:"outputTokens"`
				CacheReadTokens     int64  `json:"cacheReadTokens"`
				CacheCreationTokens int64  `json:"cacheCreationTokens"`
			} `json:"session"`
		}
		if err := json.Unmarshal(out.Bytes(), &cu); err != nil {
			t.Fatalf("ccusage session --json: %v\n%s", err, out.String())
		}
		want := map[string]tokenTotals{}
		for _, s := range cu.Session {
			want[s.Period] = tokenTotals{s.InputTokens, s.OutputTokens, s.CacheReadTokens, s.CacheCreationTokens}
		}
		code, stdout, stderr := runCLI(t, "sessions", filepath.Join(home, ".claude", "projects"), "--json", "--no-index")
		if code != 0 {
			t.Fatalf("sessions --json: exit %d: %s", code, stderr)
		}
		got := map[string]tokenTotals{}
		sc := bufio.NewScanner(strings.NewReader(stdout))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var s struct {
				ID         string `json:"id"`
				Input      int64  `json:"input_tokens"`
				Output     int64  `json:"output_tokens"`
				CacheRead  int64  `json:"cache_read_input_tokens"`
				CacheWrite int64  `json:"cache_creation_input_tokens"`
			}
			if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
				t.Fatalf("sessions --json: %v: %s", err, sc.Text())
			}
			got[s.ID] = tokenTotals{s.Input, s.Output, s.CacheRead, s.CacheWrite}
		}
		ids := map[string]bool{}
		for id := range want {
			ids[id] = true
		}
		for id := range got {
			ids[id] = true
		}
		var sorted []string
		for id := range ids {
			sorted = append(sorted, id)
		}
		sort.Strings(sorted)
		for _, id := range sorted {
			w, inW := want[id]
			g, inG := got[id]
			if why, ok := skip[id]; ok {
				t.Logf("session %s: tsinspect %+v, ccusage %+v: not compared (%s)", id, g, w, why)
				continue
			}
			switch {
			case !inW && g == (tokenTotals{}):
				// A session with no usage at all is not one of ccusage's.
			case !inW:
				t.Errorf("session %s: tsinspect %+v, ccusage has no such session", id, g)
			case !inG:
				t.Errorf("session %s: ccusage %+v, tsinspect has no such session", id, w)
			case g != w:
				t.Errorf("session %s: tsinspect %+v, ccusage %+v", id, g, w)
			}
		}
		if len(want) == 0 {
			t.Error("ccusage found no session")
		}
	})
}

// ccusagePeriod is one period of 'ccusage claude daily|weekly|monthly --json'.
type ccusagePeriod struct {
	Date                string  `json:"date"`
	Week                string  `json:"week"`
	Month               string  `json:"month"`
	InputTokens         int64   `json:"inputTokens"`
	OutputTokens        int64   `json:"outputTokens"`
	CacheReadTokens     int64   `json:"cacheReadTokens"`
	CacheCreationTokens int64   `json:"cacheCreationTokens"`
	TotalCost           float64 `json:"totalCost"`
	ModelBreakdowns     []struct {
		ModelName      string `json:"modelName"`
		MissingPricing bool   `json:"missingPricing"`
	} `json:"modelBreakdowns"`
}

// checkPeriodsAgainstCcusage checks that 'tsinspect sessions --by BY' puts
// the same tokens in the same periods as ccusage's daily, weekly or monthly
// report (in UTC, weeks from Sunday for both), and the same dollars where
// both price every model of the period: the recorded sessions' prompts
// stay far below 200K tokens, and have no fast mode or web search, where
// the two count differently (see docs/sessions.md).
func checkPeriodsAgainstCcusage(t *testing.T, home, by string) {
	t.Helper()
	cc := ccusagePath(t)
	report := map[string]string{"day": "daily", "week": "weekly", "month": "monthly"}[by]
	cmd := exec.Command(cc, "claude", report, "--json", "--offline", "--timezone", "UTC")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("ccusage %s: %v\n%s", report, err, errb.String())
	}
	var cu map[string]json.RawMessage
	if err := json.Unmarshal(out.Bytes(), &cu); err != nil {
		t.Fatalf("ccusage %s: %v\n%s", report, err, out.String())
	}
	var periods []ccusagePeriod
	if err := json.Unmarshal(cu[report], &periods); err != nil {
		t.Fatalf("ccusage %s: %v\n%s", report, err, out.String())
	}
	want := map[string]ccusagePeriod{}
	for _, p := range periods {
		want[p.Date+p.Week+p.Month] = p
	}
	code, stdout, stderr := runCLI(t, "sessions", filepath.Join(home, ".claude", "projects"), "--by", by, "--timezone", "UTC", "--json", "--no-index")
	if code != 0 {
		t.Fatalf("sessions --by %s: exit %d: %s", by, code, stderr)
	}
	got := map[string]bool{}
	dollars := 0
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var b struct {
			Period     string   `json:"period"`
			Input      int64    `json:"input_tokens"`
			Output     int64    `json:"output_tokens"`
			CacheRead  int64    `json:"cache_read_input_tokens"`
			CacheWrite int64    `json:"cache_creation_input_tokens"`
			CostUSD    float64  `json:"cost_usd"`
			CostKnown  bool     `json:"cost_known"`
			PricedAs   []string `json:"priced_as"`
		}
		if err := json.Unmarshal(sc.Bytes(), &b); err != nil {
			t.Fatalf("sessions --by %s --json: %v: %s", by, err, sc.Text())
		}
		got[b.Period] = true
		w, ok := want[b.Period]
		if !ok {
			t.Errorf("%s %s: tsinspect %+v, ccusage has no such period", by, b.Period, b)
			continue
		}
		if g, wt := (tokenTotals{b.Input, b.Output, b.CacheRead, b.CacheWrite}), (tokenTotals{w.InputTokens, w.OutputTokens, w.CacheReadTokens, w.CacheCreationTokens}); g != wt {
			t.Errorf("%s %s: tsinspect %+v, ccusage %+v", by, b.Period, g, wt)
		}
		priced := b.CostKnown && len(b.PricedAs) == 0
		for _, m := range w.ModelBreakdowns {
			priced = priced && !m.MissingPricing
		}
		if priced {
			dollars++
			if math.Abs(b.CostUSD-w.TotalCost) > 1e-9*max(1, w.TotalCost) {
				t.Errorf("%s %s: tsinspect $%v, ccusage $%v", by, b.Period, b.CostUSD, w.TotalCost)
			}
		}
	}
	t.Logf("%s: %d periods, %d of them priced by both and compared in dollars", by, len(got), dollars)
	for k, w := range want {
		if !got[k] && (w.InputTokens+w.OutputTokens+w.CacheReadTokens+w.CacheCreationTokens) > 0 {
			t.Errorf("%s %s: ccusage %+v, tsinspect has no such period", by, k, w)
		}
	}
	if len(want) == 0 {
		t.Errorf("ccusage %s found no period", report)
	}
}

// TestPublicSessionsAgainstCcusage lays the public sessions of real work
// (source/testdata/public: 1.0 to 2.1.2xx, subagents as files and inside
// agent_progress records, a session kept as its subagents' files alone)
// in a Claude Code directory and holds 'tsinspect sessions' and
// 'sessions --by day|week|month' to ccusage's totals on it: the same
// tokens per session and per period.
func TestPublicSessionsAgainstCcusage(t *testing.T) {
	ccusagePath(t)
	src := filepath.Join("..", "source", "testdata", "public")
	dirs, err := filepath.Glob(filepath.Join(src, "[0-9]*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no public sessions: %v", err)
	}
	home := t.TempDir()
	for _, d := range dirs {
		project := filepath.Join(home, ".claude", "projects", "-home-user-"+filepath.Base(d))
		err := filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(p, ".jsonl") {
				return err
			}
			rel, _ := filepath.Rel(d, p)
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			dst := filepath.Join(project, rel)
			if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
				return err
			}
			return os.WriteFile(dst, b, 0o600)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// ccusage's daily report counts the answers 2.1.37–2.1.81 copy into
	// agent_progress records (of subagents with no file of their own), as
	// tsinspect does, but its session, weekly and monthly reports leave
	// them out: those are held to the daily report alone.
	skip := map[string]string{}
	agentID := regexp.MustCompile(`"type":"agent_progress"[^\n]*?"agentId":"([^"]+)"|"agentId":"([^"]+)"[^\n]*?"type":"agent_progress"`)
	err = filepath.WalkDir(filepath.Join(home, ".claude", "projects"), func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".jsonl") || filepath.Base(filepath.Dir(p)) == "subagents" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range agentID.FindAllSubmatch(b, -1) {
			id := string(m[1]) + string(m[2])
			own := filepath.Join(strings.TrimSuffix(p, ".jsonl"), "subagents", "agent-"+id+".jsonl")
			if _, err := os.Stat(own); err != nil {
				skip[strings.TrimSuffix(filepath.Base(p), ".jsonl")] = "ccusage's session report leaves out the answers of agent " + id + ", which only agent_progress records hold"
			}
		}
		return nil
	})
	if err != nil || len(skip) == 0 {
		t.Fatalf("no public session with agent_progress answers: %v", err)
	}
	checkSessionsAgainstCcusage(t, home, skip)
	t.Run("ccusage-daily", func(t *testing.T) { checkPeriodsAgainstCcusage(t, home, "day") })
}
