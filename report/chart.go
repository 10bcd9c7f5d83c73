package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/internal/svgchart"
	"github.com/tsinspect/tsinspect/timeline"
)

// The chart types are package svgchart's, which the web view draws too;
// this file fills them from a report's turns.
type (
	chart  = svgchart.Chart
	marker = svgchart.Marker
	legend = svgchart.Legend
)

// frame lays out the axes of a chart of the turns up to ymax.
func frame(id, title, caption string, turns []*Turn, ymax float64) *chart {
	labels := make([]int, len(turns))
	for i, t := range turns {
		labels[i] = t.Index
	}
	return svgchart.Frame(id, title, caption, labels, ymax)
}

// series draws a line with dots through the values of the turns.
func series(c *chart, turns []*Turn, class, name string, value func(*Turn) int64) {
	values := make([]float64, len(turns))
	for i, t := range turns {
		values[i] = float64(value(t))
	}
	c.Series(values, class, name, func(i int) string {
		return fmt.Sprintf("turn %d: %s %s", turns[i].Index, numfmt.Thousands(value(turns[i])), name)
	})
}

// mark draws the flag markers of the turns.
func mark(c *chart, turns []*Turn, nums map[int][]int) {
	flagged := 0
	for _, t := range turns {
		if len(nums[t.Index]) > 0 {
			flagged++
		}
	}
	if flagged > maxMarkers {
		markGroups(c, turns, nums)
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
			X: c.X(i, len(turns)), Y1: c.PlotTop - 6, Y2: c.PlotBot, TextY: c.PlotTop - 10,
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
func markGroups(c *chart, turns []*Turn, nums map[int][]int) {
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
		x := svgchart.Round1((c.X(from, len(turns)) + c.X(to-1, len(turns))) / 2)
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
	series(c, turns, "s-catalog", "catalog", func(t *Turn) int64 { return int64(t.Catalog.Count) })
	series(c, turns, "s-working", "working set", func(t *Turn) int64 { return int64(t.WorkingSet.Count) })
	mark(c, turns, nums)
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
	for i, t := range turns {
		c.Stack(i, len(turns), []svgchart.Part{
			{V: float64(t.Usage.CacheReadInputTokens), Class: "b-read", Name: "cache read"},
			{V: float64(t.Usage.CacheCreationInputTokens), Class: "b-write", Name: "cache created"},
			{V: float64(t.Usage.InputTokens), Class: "b-input", Name: "input"},
		}, func(p svgchart.Part) string {
			return fmt.Sprintf("turn %d: %s %s", t.Index, numfmt.Thousands(int64(p.V)), p.Name)
		}, "")
	}
	c.Legend = []legend{{Class: "b-read", Label: "cache read"}, {Class: "b-write", Label: "cache created"}, {Class: "b-input", Label: "input"}}
	mark(c, turns, nums)
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
	series(c, turns, "s-sent", "sent + announcement", func(t *Turn) int64 { return t.ToolTokens.Sent + t.ToolTokens.Announcement })
	series(c, turns, "s-inlined", "all inlined", func(t *Turn) int64 { return t.ToolTokens.Inlined })
	mark(c, turns, nums)
	return c
}

// niceCeil and shortNumber are svgchart's, named as this package's tests
// name them.
func niceCeil(v float64) float64 { return svgchart.NiceCeil(v) }

func shortNumber(v float64) string { return svgchart.ShortNumber(v) }
