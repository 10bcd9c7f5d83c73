package web

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/internal/svgchart"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// figure is a chart with its legend and caption, as the "figure"
// fragment draws it.
type figure struct {
	// Title is said above the chart ("" for none: the tab says it).
	Title   string
	Chart   *svgchart.Chart
	Caption string
	// Marks says what the chart's markers are.
	Marks string
}

// threadFigures are the charts of the thread of turn sel, every turn of
// it: its prompt (cache read, written, uncached input) with its cache
// breaks marked, its context (the prompt's size) with its compactions
// marked, and what each turn cost; each bar leads to its turn of the
// session at key. thread is the thread's name as the page shows it.
func threadFigures(key, thread string, ss *timeline.Session, sel *timeline.Turn, tab *pricing.Table) []figure {
	var turns []*timeline.Turn
	for _, th := range ss.Threads {
		if th.ID != sel.Thread {
			continue
		}
		for _, i := range th.Turns {
			if t := view.TurnAt(ss, i); t != nil {
				turns = append(turns, t)
			}
		}
	}
	if len(turns) == 0 {
		turns = []*timeline.Turn{sel}
	}
	labels := make([]int, len(turns))
	usage := make([]struct{ read, write, input, total int64 }, len(turns))
	var top int64
	for i, t := range turns {
		labels[i] = t.Index
		if t.Decoded != nil {
			u := t.Decoded.Response.Usage
			usage[i].read, usage[i].write, usage[i].input, usage[i].total = u.CacheReadInputTokens, u.CacheCreationInputTokens, u.InputTokens, u.TotalInput()
		}
		top = max(top, usage[i].total)
	}
	href := func(t *timeline.Turn) string {
		return "/s/" + url.PathEscape(key) + "/turn/" + strconv.Itoa(t.Index)
	}
	n := len(turns)

	cache := svgchart.Frame("chart-cache", "Prompt cache across "+thread, "", labels, float64(top))
	breaks := 0
	for i, t := range turns {
		u := usage[i]
		cache.Column(i, n, []svgchart.Part{
			{V: float64(u.read), Class: "b-read"}, {V: float64(u.write), Class: "b-write"}, {V: float64(u.input), Class: "b-input"},
		}, fmt.Sprintf("turn %d: prompt %s = %s read + %s written + %s uncached", t.Index,
			numfmt.Thousands(u.total), numfmt.Thousands(u.read), numfmt.Thousands(u.write), numfmt.Thousands(u.input)), href(t))
		if lost, ok := cacheBreak(t); ok {
			breaks++
			mark(cache, i, n, "m-break", "break", fmt.Sprintf("turn %d: cache break, %s tokens lost", t.Index, numfmt.Thousands(lost)), href(t))
		}
	}
	cache.Legend = []svgchart.Legend{{Class: "b-read", Label: "cache read"}, {Class: "b-write", Label: "cache written"}, {Class: "b-input", Label: "uncached input"}}
	selected(cache, turns, sel)

	ctx := svgchart.Frame("chart-context", "Context across "+thread, "", labels, float64(top))
	values := make([]float64, n)
	for i := range turns {
		values[i] = float64(usage[i].total)
	}
	ctx.Series(values, "s-context", "prompt tokens", func(i int) string {
		return fmt.Sprintf("turn %d: prompt %s tokens", turns[i].Index, numfmt.Thousands(usage[i].total))
	})
	if n > maxDots {
		// The line alone: a point a turn would be more markup than chart.
		ctx.Dots = nil
	}
	compactions, restarts := 0, 0
	for i, t := range turns {
		switch t.Link {
		case timeline.LinkCompaction:
			compactions++
			mark(ctx, i, n, "m-compact", "compacted", fmt.Sprintf("turn %d: the history was compacted before it", t.Index), href(t))
		case timeline.LinkRestart:
			restarts++
			mark(ctx, i, n, "m-restart", "restarted", fmt.Sprintf("turn %d: the conversation started again before it (its context cleared, or the record it continues missing from the file)", t.Index), href(t))
		}
	}
	marked := numfmt.Count(compactions, "compaction marked", "compactions marked")
	legend := "compacted: the history was compacted before this turn; "
	if restarts > 0 {
		marked += ", " + numfmt.Count(restarts, "restart marked", "restarts marked")
		legend += "restarted: the conversation started again before this turn; "
	}
	selected(ctx, turns, sel)

	costs := make([]float64, n)
	var total, most float64
	estimated, unpriced := false, 0
	for i, t := range turns {
		c, p, ok := timeline.TurnCost(tab, t)
		if !ok {
			unpriced++
			continue
		}
		costs[i] = c.Total
		total += c.Total
		most = max(most, c.Total)
		estimated = estimated || p.Estimated
	}
	// The scale is in tenths of a cent, so that its ticks are round.
	cost := svgchart.Frame("chart-cost", "Cost per turn across "+thread, "", labels, most*1000)
	for i, t := range turns {
		cost.Column(i, n, []svgchart.Part{{V: costs[i] * 1000, Class: "b-cost"}},
			fmt.Sprintf("turn %d: %s", t.Index, pricing.Format(costs[i], true)), href(t))
	}
	for i := range cost.YTicks {
		v := cost.Top * float64(i) / 4 / 1000
		cost.YTicks[i].Label = "$" + strings.TrimRight(strings.TrimRight(strconv.FormatFloat(v, 'f', 3, 64), "0"), ".")
	}
	selected(cost, turns, sel)
	mark := ""
	if estimated {
		mark = "≈"
	}
	costCaption := fmt.Sprintf("What each request of the thread cost at list prices (input, cache writes and reads, output): %s%s over its %s at %s.",
		mark, pricing.Format(total, true), numfmt.Count(n, "turn", "turns"), tab.Describe())
	if unpriced > 0 {
		costCaption += fmt.Sprintf(" %s had no price and no bar.", numfmt.Count(unpriced, "turn", "turns"))
	}
	if estimated {
		costCaption += " ≈: a model priced as its neighbour in the table."
	}

	return []figure{
		{Chart: cache, Caption: fmt.Sprintf("Prompt tokens of each request of the thread: read from the cache, written to it, and sent uncached, stacked; %s. Click a bar for its turn.",
			numfmt.Count(breaks, "cache break marked", "cache breaks marked")), Marks: "break: a cache break; ▼ the turn selected"},
		{Title: ctx.Title, Chart: ctx, Caption: fmt.Sprintf("The prompt's size at each request of the thread (what the model was sent); %s.", marked),
			Marks: legend + "▼ the turn selected"},
		{Title: cost.Title, Chart: cost, Caption: costCaption, Marks: "▼ the turn selected"},
	}
}

// maxDots is the most turns whose context chart has a point each.
const maxDots = 200

// cacheBreak reports whether t has a cache break flag, and the tokens it
// lost.
func cacheBreak(t *timeline.Turn) (lost int64, ok bool) {
	for _, f := range t.Flags {
		if f.Kind == "cache_break" {
			lost += f.TokensLost
			ok = true
		}
	}
	return lost, ok
}

// mark marks turn i of n with a labelled line over the plot.
func mark(c *svgchart.Chart, i, n int, class, label, title, href string) {
	x := c.X(i, n)
	c.Markers = append(c.Markers, svgchart.Marker{X: x, Y1: c.PlotTop - 6, Y2: c.PlotBot, TextY: c.PlotTop - 10,
		Class: class, Label: label, Title: title, Href: href})
}

// selected marks the turn selected with a ▼ over the plot.
func selected(c *svgchart.Chart, turns []*timeline.Turn, sel *timeline.Turn) {
	for i, t := range turns {
		if t.Index == sel.Index {
			x := c.X(i, len(turns))
			c.Markers = append(c.Markers, svgchart.Marker{X: x, Y1: c.PlotBot, Y2: c.PlotBot + 4, TextY: c.PlotTop - 2,
				Class: "m-sel", Label: "▼", Title: fmt.Sprintf("turn %d, selected", t.Index), Href: "#turn-" + strconv.Itoa(t.Index)})
		}
	}
}

// dayFigure is the sessions page's cost per day (or week) as a chart:
// each period's cost, what its cache breaks cost stacked on the rest;
// caption says what it counts.
func dayFigure(days []dayView, by, caption string) figure {
	labels := make([]int, len(days))
	var most float64
	for i, d := range days {
		// Labelled by month and day, 1127 written "11-27" below.
		if t, err := time.Parse("2006-01-02", d.Day); err == nil {
			labels[i] = int(t.Month())*100 + t.Day()
		}
		most = max(most, d.USD)
	}
	c := svgchart.FrameSized("chart-days", "Cost per "+by, "", labels, most*100, 760, 170)
	c.XName = by
	for i, d := range days {
		c.Stack(i, len(days), []svgchart.Part{
			{V: (d.USD - d.BreaksUSD) * 100, Class: "b-cost", Name: "the rest"},
			{V: d.BreaksUSD * 100, Class: "b-break", Name: "cache breaks"},
		}, func(p svgchart.Part) string {
			if p.Class == "b-break" {
				return fmt.Sprintf("%s: cache breaks %s of %s", d.Day, pricing.Format(d.BreaksUSD, true), d.Text)
			}
			return d.Text
		}, "")
	}
	for i := range c.YTicks {
		v := c.Top * float64(i) / 4 / 100
		c.YTicks[i].Label = "$" + strings.TrimRight(strings.TrimRight(strconv.FormatFloat(v, 'f', 2, 64), "0"), ".")
	}
	for i := range c.XTicks {
		if k, err := strconv.Atoi(c.XTicks[i].Label); err == nil {
			c.XTicks[i].Label = fmt.Sprintf("%02d-%02d", k/100, k%100)
		}
	}
	c.Legend = []svgchart.Legend{{Class: "b-cost", Label: "cost"}, {Class: "b-break", Label: "of which cache breaks"}}
	return figure{Title: "Cost per " + by, Chart: c, Caption: caption}
}
