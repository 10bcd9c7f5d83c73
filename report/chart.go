package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/timeline"
)

// chart is an SVG chart of one value series or more over a thread's
// turns, drawn by the HTML template.
type chart struct {
	ID, Title, Caption string
	W, H               int // viewBox size
	PlotTop, PlotBot   float64
	PlotLeft, PlotRite float64
	// Top is the value at the top of the scale.
	Top float64
	// YLabelX and XLabelY place the axis labels.
	YLabelX, XLabelY float64
	YTicks           []tick
	XTicks           []tick
	Bars             []bar
	Lines            []line
	Dots             []dot
	Markers          []marker
	Legend           []legend
	// Grouped is set when the flagged turns are too many to mark one by
	// one, and are marked in groups (markGroups).
	Grouped bool
}

type tick struct {
	Pos      float64
	LabelPos float64 // y of a y tick's label
	Label    string
}

type bar struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

type line struct {
	Points string
	Class  string
}

type dot struct {
	X, Y  float64
	Class string
	Title string
}

// marker is a vertical line on a flagged turn, with the flags' numbers.
type marker struct {
	X, Y1, Y2 float64
	TextY     float64
	Class     string
	Label     string
	Href      string
	Title     string
}

type legend struct {
	Class, Label string
}

// Chart geometry, in viewBox units.
const (
	chartW      = 1100
	chartH      = 200
	chartLeft   = 64
	chartRight  = 16
	chartTop    = 26
	chartBottom = 30
)

// frame lays out the axes of a chart of n turns up to ymax.
func frame(id, title, caption string, turns []*Turn, ymax float64) *chart {
	c := &chart{ID: id, Title: title, Caption: caption, W: chartW, H: chartH,
		PlotTop: chartTop, PlotBot: chartH - chartBottom, PlotLeft: chartLeft, PlotRite: chartW - chartRight,
		YLabelX: chartLeft - 6, XLabelY: chartH - chartBottom + 16}
	top := niceCeil(max(ymax, 4))
	c.Top = top
	for i := 0; i <= 4; i++ {
		v := top * float64(i) / 4
		y := c.y(v, top)
		c.YTicks = append(c.YTicks, tick{Pos: y, LabelPos: y + 4, Label: shortNumber(v)})
	}
	c.XTicks = xTicks(c, turns)
	return c
}

// labelWidth is the width of a character of an axis label, in viewBox
// units (a little more than the 11px font's average digit).
const labelWidth = 8

// xTicks labels the turn axis: about 24 labels at most, never closer than
// their width allows, and always the last turn (which replaces the label
// before it when the two would touch, as "81" and "82" did).
func xTicks(c *chart, turns []*Turn) []tick {
	var out []tick
	if len(turns) == 0 {
		return out
	}
	widest := len(strconv.Itoa(turns[len(turns)-1].Index))
	for _, t := range turns {
		widest = max(widest, len(strconv.Itoa(t.Index)))
	}
	gap := float64(widest*labelWidth + 6)
	every := max(int(math.Ceil(float64(len(turns))/24)), 1)
	for i, t := range turns {
		last := i == len(turns)-1
		if i%every != 0 && !last {
			continue
		}
		tk := tick{Pos: c.x(i, len(turns)), Label: strconv.Itoa(t.Index)}
		if n := len(out); n > 0 && tk.Pos-out[n-1].Pos < gap {
			if !last {
				continue
			}
			out = out[:n-1] // the last turn's label wins
		}
		out = append(out, tk)
	}
	return out
}

// x is the centre of turn i of n.
func (c *chart) x(i, n int) float64 {
	slot := (c.PlotRite - c.PlotLeft) / float64(max(n, 1))
	return round1(c.PlotLeft + (float64(i)+0.5)*slot)
}

// y places value v on a scale up to top.
func (c *chart) y(v, top float64) float64 {
	if top <= 0 {
		return c.PlotBot
	}
	return round1(c.PlotBot - v/top*(c.PlotBot-c.PlotTop))
}

// series draws a line with dots through the values of the turns.
func (c *chart) series(turns []*Turn, top float64, class, name string, value func(*Turn) int64) {
	var pts []string
	for i, t := range turns {
		v := value(t)
		x, y := c.x(i, len(turns)), c.y(float64(v), top)
		pts = append(pts, fmt.Sprintf("%g,%g", x, y))
		c.Dots = append(c.Dots, dot{X: x, Y: y, Class: class, Title: fmt.Sprintf("turn %d: %s %s", t.Index, numfmt.Thousands(v), name)})
	}
	if len(pts) > 1 {
		c.Lines = append(c.Lines, line{Points: strings.Join(pts, " "), Class: class})
	}
	c.Legend = append(c.Legend, legend{Class: class, Label: name})
}

// mark draws the flag markers of the turns.
func (c *chart) mark(turns []*Turn, nums map[int][]int) {
	flagged := 0
	for _, t := range turns {
		if len(nums[t.Index]) > 0 {
			flagged++
		}
	}
	if flagged > maxMarkers {
		c.markGroups(turns, nums)
		return
	}
	for i, t := range turns {
		ns := nums[t.Index]
		if len(ns) == 0 {
			continue
		}
		sev := timeline.SeverityInfo
		var kinds, labels []string
		for _, f := range t.Flags {
			if timeline.SeverityRank(f.Severity) < timeline.SeverityRank(sev) {
				sev = f.Severity
			}
			if !contains(kinds, f.Kind) {
				kinds = append(kinds, f.Kind)
			}
		}
		for _, n := range ns {
			labels = append(labels, strconv.Itoa(n))
		}
		c.Markers = append(c.Markers, marker{
			X: c.x(i, len(turns)), Y1: c.PlotTop - 6, Y2: c.PlotBot, TextY: c.PlotTop - 10,
			Class: "m-" + sev, Label: "⚑" + strings.Join(labels, ","), Href: fmt.Sprintf("#flag-%d", ns[0]),
			Title: fmt.Sprintf("turn %d: %s", t.Index, strings.Join(kinds, ", ")),
		})
	}
}

// maxMarkers is the most flagged turns a chart marks one by one; past it,
// marks would cover the chart, and flagged turns are grouped instead.
const maxMarkers = 40

// markGroups marks flagged turns in groups of neighbouring turns, at most
// maxMarkers of them: a short tick above the plot per group that has
// flags, labelled with how many, its title naming the turns and the
// kinds, linking to its first flag. Every flag is still listed below the
// charts.
func (c *chart) markGroups(turns []*Turn, nums map[int][]int) {
	c.Grouped = true
	per := (len(turns) + maxMarkers - 1) / maxMarkers
	for from := 0; from < len(turns); from += per {
		to := min(from+per, len(turns))
		sev := timeline.SeverityInfo
		count := map[string]int{}
		var kinds []string
		first, n := 0, 0
		for _, t := range turns[from:to] {
			ns := nums[t.Index]
			if len(ns) == 0 {
				continue
			}
			if first == 0 {
				first = ns[0]
			}
			n += len(ns)
			for _, f := range t.Flags {
				if timeline.SeverityRank(f.Severity) < timeline.SeverityRank(sev) {
					sev = f.Severity
				}
				if count[f.Kind] == 0 {
					kinds = append(kinds, f.Kind)
				}
				count[f.Kind]++
			}
		}
		if n == 0 {
			continue
		}
		var what []string
		for _, k := range kinds {
			what = append(what, fmt.Sprintf("%s ×%d", k, count[k]))
		}
		x := round1((c.x(from, len(turns)) + c.x(to-1, len(turns))) / 2)
		c.Markers = append(c.Markers, marker{
			X: x, Y1: c.PlotTop - 6, Y2: c.PlotTop, TextY: c.PlotTop - 10,
			Class: "m-" + sev, Label: strconv.Itoa(n), Href: fmt.Sprintf("#flag-%d", first),
			Title: fmt.Sprintf("turns %d–%d: %s", turns[from].Index, turns[to-1].Index, strings.Join(what, ", ")),
		})
	}
}

// toolsChart draws the catalog and working-set sizes of a thread.
func toolsChart(id string, turns []*Turn, nums map[int][]int) *chart {
	var ymax int64 = 1
	for _, t := range turns {
		ymax = max(ymax, int64(t.Catalog.Count), int64(t.WorkingSet.Count))
	}
	c := frame(id, "Catalog and working set", "Deferred tools announced to the model (catalog) and tools whose schemas it can call (working set), per turn.", turns, float64(ymax))
	top := c.Top
	c.series(turns, top, "s-catalog", "catalog", func(t *Turn) int64 { return int64(t.Catalog.Count) })
	c.series(turns, top, "s-working", "working set", func(t *Turn) int64 { return int64(t.WorkingSet.Count) })
	c.mark(turns, nums)
	return c
}

// cacheChart draws each turn's prompt tokens: cache read, cache created
// and uncached input, stacked.
func cacheChart(id string, turns []*Turn, nums map[int][]int) *chart {
	var ymax int64 = 1
	for _, t := range turns {
		ymax = max(ymax, t.Usage.CacheReadInputTokens+t.Usage.CacheCreationInputTokens+t.Usage.InputTokens)
	}
	c := frame(id, "Prompt tokens", "Cache read, cache created and uncached input tokens of each request, stacked: a tall orange bar after green ones is a cache break.", turns, float64(ymax))
	top := c.Top
	slot := (c.PlotRite - c.PlotLeft) / float64(max(len(turns), 1))
	w := round1(math.Max(1, math.Min(slot*0.7, 48)))
	for i, t := range turns {
		x := round1(c.x(i, len(turns)) - w/2)
		base := 0.0
		for _, part := range []struct {
			v           int64
			class, name string
		}{
			{t.Usage.CacheReadInputTokens, "b-read", "cache read"},
			{t.Usage.CacheCreationInputTokens, "b-write", "cache created"},
			{t.Usage.InputTokens, "b-input", "input"},
		} {
			if part.v <= 0 {
				continue
			}
			y0, y1 := c.y(base, top), c.y(base+float64(part.v), top)
			c.Bars = append(c.Bars, bar{X: x, Y: y1, W: w, H: round1(y0 - y1), Class: part.class,
				Title: fmt.Sprintf("turn %d: %s %s", t.Index, numfmt.Thousands(part.v), part.name)})
			base += float64(part.v)
		}
	}
	c.Legend = []legend{{"b-read", "cache read"}, {"b-write", "cache created"}, {"b-input", "input"}}
	c.mark(turns, nums)
	return c
}

// defsChart draws each turn's tool-definition tokens as sent and with
// every deferred tool inlined.
func defsChart(id string, turns []*Turn, nums map[int][]int) *chart {
	var ymax int64 = 1
	unknown, estimated := 0, 0
	for _, t := range turns {
		ymax = max(ymax, t.ToolTokens.Sent+t.ToolTokens.Announcement, t.ToolTokens.Inlined)
		unknown = max(unknown, t.ToolTokens.Unknown)
		estimated = max(estimated, t.ToolTokens.Estimated)
	}
	caption := "Tool-definition tokens of each request as sent (with the catalog announcement), and with every deferred tool inlined instead; estimates calibrated against each request's measured prompt."
	if unknown > 0 {
		caption += fmt.Sprintf(" Up to %d catalog %s of unknown size are left out of the inlined line, a lower bound.", unknown, numfmt.Plural(unknown, "tool", "tools"))
	}
	if estimated > 0 {
		caption += fmt.Sprintf(" Up to %d catalog %s never seen in the capture are counted in the inlined line at the average size of the deferred schemas it holds.", estimated, numfmt.Plural(estimated, "tool", "tools"))
	}
	c := frame(id, "Tool-definition tokens", caption, turns, float64(ymax))
	top := c.Top
	c.series(turns, top, "s-sent", "sent + announcement", func(t *Turn) int64 { return t.ToolTokens.Sent + t.ToolTokens.Announcement })
	c.series(turns, top, "s-inlined", "all inlined", func(t *Turn) int64 { return t.ToolTokens.Inlined })
	c.mark(turns, nums)
	return c
}

// niceCeil rounds v up to 1, 2, 2.5 or 5 times a power of ten, so that
// quarter ticks are round.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 4, 5, 8, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// shortNumber writes an axis label: 950, 1.5k, 22k, 1.2M.
func shortNumber(v float64) string {
	switch {
	case v >= 1e6:
		return trimZero(fmt.Sprintf("%.1f", v/1e6)) + "M"
	case v >= 1e3:
		return trimZero(fmt.Sprintf("%.1f", v/1e3)) + "k"
	}
	return trimZero(fmt.Sprintf("%.1f", v))
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

func round1(v float64) float64 { return math.Round(v*10) / 10 }
