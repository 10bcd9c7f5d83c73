package web

import (
	"fmt"
	"time"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// A Claude Code session's page is first served from the listing: the
// listing's reading of its files (sessionfiles.Summary, which the index
// keeps) holds each answer's model, time and usage. Its turn list shows
// those at once, while the session is read whole in the background (a
// 1,000-turn session takes seconds); the page then swaps in the turns,
// threads and flags.

// firstRead starts the session's first reading in the background, once,
// holding the session for it (so that it is not let go while read); it
// reports whether that reading is still under way.
func (s *Server) firstRead(o *opened, it *item) (reading bool) {
	o.first.Do(func() {
		o.firstDone = make(chan struct{})
		_, release, err := s.open.get(it.key, it.path)
		if err != nil {
			close(o.firstDone)
			return
		}
		go func() {
			defer close(o.firstDone)
			defer release()
			o.mu.Lock()
			defer o.mu.Unlock()
			o.refresh(s.ctx, s.open.policy)
		}()
	})
	select {
	case <-o.firstDone:
		return false
	default:
		return true
	}
}

// lightTurns is the turn list of a session being read, from the
// listing's reading of its files: each answer (its time, model, prompt
// and cost, as the listing prices them), with no turn number, thread or
// flag, which the whole reading gives.
func (s *Server) lightTurns(it *item, red *redactor) *turnsView {
	v := &turnsView{Light: true, Threads: []threadView{}, Turns: []turnRow{},
		Columns: []string{"", "ANSWERED", "MODEL", "PROMPT", "CACHE READ", "OUTPUT", "COST"},
		Right:   []bool{false, false, false, true, true, true, true}}
	var total float64
	answers := 0
	mark := "" // ≥ with an answer unpriced, ≈ with one priced as a neighbour
	for _, u := range it.sum.Usage {
		if pricing.NotAModel(u.Model) {
			continue // Claude Code's own messages, no answer of the API
		}
		answers++
		cost := "-"
		c, p, ok := s.opts.Prices.Cost(u.Model, u.Pricing())
		switch {
		case !ok || c.FastUnpriced:
			mark = "≥"
		case p.Estimated && mark == "":
			mark = "≈"
		}
		if ok {
			cost = pricing.Format(c.Total, true)
			total += c.Total
		}
		at := ""
		if !u.At.IsZero() {
			at = u.At.In(time.Local).Format("15:04:05")
		}
		prompt := u.Input + u.CacheRead + u.CacheWrite5m + u.CacheWrite1h
		cells := []string{"", at, red.model(decode.ShortModel(u.Model)), view.Tokens(prompt), view.Tokens(u.CacheRead), view.Tokens(u.Output), cost}
		row := turnRow{Index: -answers, Cells: make([][][2]string, len(cells))}
		for i, c := range cells {
			row.Cells[i] = [][2]string{{"", c}}
		}
		v.Turns = append(v.Turns, row)
	}
	v.Header = fmt.Sprintf("Reading the session… meanwhile its %s as the listing read them (%s at %s); the turns, threads and flags follow",
		numfmt.Count(answers, "answer", "answers"), mark+pricing.Format(total, true), red.text(s.opts.Prices.Describe()))
	return v
}
