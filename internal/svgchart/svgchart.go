// Package svgchart lays out the SVG charts of values over a series of
// turns that the HTML report and the web view draw: the axes, round
// ticks, turn labels that never touch, bars, lines and markers, in the
// units of a viewBox. Template draws a Chart with html/template: no
// script, nothing loaded.
package svgchart

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Chart is an SVG chart of one value series or more over turns.
type Chart struct {
	ID, Title, Caption string
	W, H               int // viewBox size
	PlotTop, PlotBot   float64
	PlotLeft, PlotRite float64
	// Top is the value at the top of the scale.
	Top float64
	// YLabelX and XLabelY place the axis labels; XName names the x axis
	// ("turn").
	YLabelX, XLabelY float64
	XName            string
	YTicks           []Tick
	XTicks           []Tick
	Bars             []Bar
	Columns          []Column
	Lines            []Line
	Dots             []Dot
	Markers          []Marker
	Legend           []Legend
	// Grouped is set when the flagged turns are too many to mark one by
	// one, and are marked in groups.
	Grouped bool
}

// Tick is a label of an axis.
type Tick struct {
	Pos      float64
	LabelPos float64 // y of a y tick's label
	Label    string
}

// Bar is a rectangle, with what hovering it says and, when Href is set,
// where clicking it leads.
type Bar struct {
	X, Y, W, H float64
	Class      string
	Title      string
	Href       string
}

// Column is the stacked bar of one turn as one link, titled once: what a
// chart of many turns draws (a bar of each part, each titled and linked,
// would be several times the markup).
type Column struct {
	Href, Title string
	Bars        []Bar
}

// Line is a polyline through points "x,y x,y ...".
type Line struct {
	Points string
	Class  string
}

// Dot is a point of a line, with what hovering it says.
type Dot struct {
	X, Y  float64
	Class string
	Title string
}

// Marker is a vertical line on a turn, labelled, linking to Href.
type Marker struct {
	X, Y1, Y2 float64
	TextY     float64
	Class     string
	Label     string
	Href      string
	Title     string
}

// Legend is one entry of a chart's legend: its class and what it is.
type Legend struct {
	Class, Label string
}

// Geometry, in viewBox units.
const (
	Width  = 1100
	Height = 200
	left   = 64
	right  = 16
	top    = 26
	bottom = 30
)

// Frame lays out the axes of a chart over turns labelled labels (their
// numbers), with values up to ymax, Width × Height.
func Frame(id, title, caption string, labels []int, ymax float64) *Chart {
	return FrameSized(id, title, caption, labels, ymax, Width, Height)
}

// FrameSized is Frame in a viewBox of w × h: a chart drawn narrower than
// Width keeps its text legible with a narrower viewBox.
func FrameSized(id, title, caption string, labels []int, ymax float64, w, h int) *Chart {
	c := &Chart{ID: id, Title: title, Caption: caption, W: w, H: h,
		PlotTop: top, PlotBot: float64(h - bottom), PlotLeft: left, PlotRite: float64(w - right),
		YLabelX: left - 6, XLabelY: float64(h - bottom + 16), XName: "turn"}
	t := NiceCeil(max(ymax, 4))
	c.Top = t
	for i := 0; i <= 4; i++ {
		v := t * float64(i) / 4
		y := c.Y(v, t)
		c.YTicks = append(c.YTicks, Tick{Pos: y, LabelPos: y + 4, Label: ShortNumber(v)})
	}
	c.XTicks = xTicks(c, labels)
	return c
}

// LabelWidth is the width of a character of an axis label, in viewBox
// units (a little more than the 11px font's average digit).
const LabelWidth = 8

// xTicks labels the turn axis: about 24 labels at most, never closer than
// their width allows, and always the last turn (which replaces the label
// before it when the two would touch, as "81" and "82" did).
func xTicks(c *Chart, labels []int) []Tick {
	var out []Tick
	if len(labels) == 0 {
		return out
	}
	widest := 0
	for _, n := range labels {
		widest = max(widest, len(strconv.Itoa(n)))
	}
	gap := float64(widest*LabelWidth + 6)
	every := max(int(math.Ceil(float64(len(labels))/24)), 1)
	for i, n := range labels {
		last := i == len(labels)-1
		if i%every != 0 && !last {
			continue
		}
		tk := Tick{Pos: c.X(i, len(labels)), Label: strconv.Itoa(n)}
		if k := len(out); k > 0 && tk.Pos-out[k-1].Pos < gap {
			if !last {
				continue
			}
			out = out[:k-1] // the last turn's label wins
		}
		out = append(out, tk)
	}
	return out
}

// X is the centre of turn i of n.
func (c *Chart) X(i, n int) float64 {
	slot := (c.PlotRite - c.PlotLeft) / float64(max(n, 1))
	return Round1(c.PlotLeft + (float64(i)+0.5)*slot)
}

// Y places value v on a scale up to top.
func (c *Chart) Y(v, top float64) float64 {
	if top <= 0 {
		return c.PlotBot
	}
	return Round1(c.PlotBot - v/top*(c.PlotBot-c.PlotTop))
}

// BarWidth is the width of a bar of turn of n: most of its slot, at least
// one unit, at most 48.
func (c *Chart) BarWidth(n int) float64 {
	slot := (c.PlotRite - c.PlotLeft) / float64(max(n, 1))
	return Round1(math.Max(1, math.Min(slot*0.7, 48)))
}

// Part is one part of a stacked bar: its value, class and name.
type Part struct {
	V           float64
	Class, Name string
}

// Stack draws the bar of turn i of n stacked from parts (those of no
// value left out), each titled by title(part), linking to href.
func (c *Chart) Stack(i, n int, parts []Part, title func(Part) string, href string) {
	w := c.BarWidth(n)
	x := Round1(c.X(i, n) - w/2)
	base := 0.0
	for _, p := range parts {
		if p.V <= 0 {
			continue
		}
		y0, y1 := c.Y(base, c.Top), c.Y(base+p.V, c.Top)
		c.Bars = append(c.Bars, Bar{X: x, Y: y1, W: w, H: Round1(y0 - y1), Class: p.Class, Title: title(p), Href: href})
		base += p.V
	}
}

// Column draws the bar of turn i of n stacked from parts (those of no
// value left out) as one link to href, titled title.
func (c *Chart) Column(i, n int, parts []Part, title, href string) {
	w := c.BarWidth(n)
	x := Round1(c.X(i, n) - w/2)
	col := Column{Href: href, Title: title}
	base := 0.0
	for _, p := range parts {
		if p.V <= 0 {
			continue
		}
		y0, y1 := c.Y(base, c.Top), c.Y(base+p.V, c.Top)
		col.Bars = append(col.Bars, Bar{X: x, Y: y1, W: w, H: Round1(y0 - y1), Class: p.Class})
		base += p.V
	}
	c.Columns = append(c.Columns, col)
}

// Series draws a line with dots through values, one a turn, titled by
// title(i).
func (c *Chart) Series(values []float64, class, name string, title func(i int) string) {
	var pts []string
	for i, v := range values {
		x, y := c.X(i, len(values)), c.Y(v, c.Top)
		pts = append(pts, fmt.Sprintf("%g,%g", x, y))
		c.Dots = append(c.Dots, Dot{X: x, Y: y, Class: class, Title: title(i)})
	}
	if len(pts) > 1 {
		c.Lines = append(c.Lines, Line{Points: strings.Join(pts, " "), Class: class})
	}
	c.Legend = append(c.Legend, Legend{Class: class, Label: name})
}

// NiceCeil rounds v up to 1, 2, 4, 5, 8 or 10 times a power of ten, so
// that quarter ticks are round.
func NiceCeil(v float64) float64 {
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

// ShortNumber writes an axis label: 950, 1.5k, 22k, 1.2M.
func ShortNumber(v float64) string {
	switch {
	case v >= 1e6:
		return trimZero(fmt.Sprintf("%.1f", v/1e6)) + "M"
	case v >= 1e3:
		return trimZero(fmt.Sprintf("%.1f", v/1e3)) + "k"
	}
	return trimZero(fmt.Sprintf("%.1f", v))
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// Round1 rounds v to a tenth, as the viewBox's coordinates are written.
func Round1(v float64) float64 { return math.Round(v*10) / 10 }

// Template defines "svgchart", which draws a *Chart (its figure's title,
// legend and caption are the caller's): bars with a link where they have
// one, lines, dots and markers, each with its title to hover.
const Template = `{{define "svgchart"}}<svg class="chart" id="{{.ID}}" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="{{.Title}}">
{{$c := .}}{{range .YTicks}}<line class="grid" x1="{{$c.PlotLeft}}" x2="{{$c.PlotRite}}" y1="{{.Pos}}" y2="{{.Pos}}"/><text class="lbl-y" x="{{$c.YLabelX}}" y="{{.LabelPos}}">{{.Label}}</text>
{{end}}<line class="axis" x1="{{.PlotLeft}}" x2="{{.PlotRite}}" y1="{{.PlotBot}}" y2="{{.PlotBot}}"/>
{{range .XTicks}}<text class="lbl-x" x="{{.Pos}}" y="{{$c.XLabelY}}">{{.Label}}</text>{{end}}<text class="lbl-y" x="{{.YLabelX}}" y="{{.XLabelY}}">{{.XName}}</text>
{{range .Bars}}{{if .Href}}<a href="{{.Href}}">{{end}}<rect class="{{.Class}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><title>{{.Title}}</title></rect>{{if .Href}}</a>{{end}}{{end}}
{{range .Columns}}<a href="{{.Href}}"><title>{{.Title}}</title>{{range .Bars}}<rect class="{{.Class}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"/>{{end}}</a>{{end}}
{{range .Lines}}<polyline class="{{.Class}}" points="{{.Points}}"/>{{end}}
{{range .Dots}}<circle class="{{.Class}}" cx="{{.X}}" cy="{{.Y}}" r="3"><title>{{.Title}}</title></circle>{{end}}
{{range .Markers}}<a href="{{.Href}}"><title>{{.Title}}</title><line class="mk {{.Class}}" x1="{{.X}}" x2="{{.X}}" y1="{{.Y1}}" y2="{{.Y2}}"/><text class="mk {{.Class}}" x="{{.X}}" y="{{.TextY}}">{{.Label}}</text></a>{{end}}
</svg>{{end}}`
