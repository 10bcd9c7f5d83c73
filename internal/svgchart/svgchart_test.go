package svgchart

import (
	"bytes"
	"html/template"
	"strings"
	"testing"
)

// A stacked bar of three parts, one of them zero, is two rectangles, one
// on the other, as tall together as their sum on the chart's scale; the
// template draws them with their link and title.
func TestStack(t *testing.T) {
	c := Frame("c", "T", "", []int{1, 2}, 100)
	if c.Top != 100 {
		t.Fatalf("top %v", c.Top)
	}
	c.Stack(1, 2, []Part{{V: 25, Class: "a"}, {V: 0, Class: "b"}, {V: 50, Class: "c"}}, func(p Part) string { return p.Class }, "/s/x/turn/2")
	if len(c.Bars) != 2 || c.Bars[0].Class != "a" || c.Bars[1].Class != "c" {
		t.Fatalf("bars %+v", c.Bars)
	}
	plot := c.PlotBot - c.PlotTop
	if h := c.Bars[0].H + c.Bars[1].H; h != Round1(plot*0.75) || c.Bars[1].Y+c.Bars[1].H != c.Bars[0].Y {
		t.Errorf("bars %+v: want 75%% of the %v plot, one on the other", c.Bars, plot)
	}
	tm := template.Must(template.New("t").Parse(Template))
	var b bytes.Buffer
	if err := tm.ExecuteTemplate(&b, "svgchart", c); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(b.String(), `<a href="/s/x/turn/2"><rect`); got != 2 {
		t.Errorf("%d linked bars in %s", got, b.String())
	}
}

func TestNiceCeilAndShortNumber(t *testing.T) {
	for in, want := range map[float64]float64{0: 1, 3: 4, 4.5: 5, 7: 8, 9: 10, 22_600: 40_000, 101: 200} {
		if got := NiceCeil(in); got != want {
			t.Errorf("NiceCeil(%v) = %v, want %v", in, got, want)
		}
	}
	if ShortNumber(22500) != "22.5k" || ShortNumber(1.5e6) != "1.5M" || ShortNumber(20) != "20" {
		t.Error("ShortNumber")
	}
}
