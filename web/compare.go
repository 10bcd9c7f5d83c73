package web

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/tsinspect/tsinspect/diffreport"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/timeline"
)

// compareView is what the Compare page's template gets.
type compareView struct {
	A, B      string // keys
	AName     string
	BName     string
	Sessions  []otherSession // to choose from
	Verdict   string
	Prices    string
	Redaction string
	Sections  []cmpSection
	Same      bool
	Chosen    bool
	Problem   string
}

// diffClass is a line of a changed system block or description, with the
// class its mark gives it.
func diffClass(line string) string {
	switch {
	case strings.HasPrefix(line, "-"):
		return "removed"
	case strings.HasPrefix(line, "+"):
		return "added"
	}
	return "dim"
}

// comparePage sets two sessions side by side as 'tsinspect diff' does
// (package diffreport), redacted as the server's policy says: ?a=KEY&b=KEY.
func (s *Server) comparePage(w http.ResponseWriter, r *http.Request) {
	a, b := r.URL.Query().Get("a"), r.URL.Query().Get("b")
	v := compareView{A: a, B: b}
	policy := s.policyOf(r)
	redacted := policy != redact.Off
	s.list.mu.Lock()
	for _, it := range s.list.items {
		v.Sessions = append(v.Sessions, otherSession{Key: it.key, Name: it.key + "  " + it.project(redacted)})
	}
	s.list.mu.Unlock()
	if a == "" || b == "" {
		s.render(w, r, http.StatusOK, "compare", "Compare", v)
		return
	}
	ia, ib := s.list.lookup(a), s.list.lookup(b)
	if ia == nil || ib == nil {
		missing := a
		if ia != nil {
			missing = b
		}
		v.Problem = "No session listed here is called " + missing + "."
		s.render(w, r, http.StatusNotFound, "compare", "Compare", v)
		return
	}
	v.Chosen = true
	v.AName, v.BName = a+"  "+s.list.titleOf(ia, redacted), b+"  "+s.list.titleOf(ib, redacted)
	in := func(it *item, name string) (diffreport.Input, error) {
		o, release, err := s.open.get(it.key, it.path)
		if err != nil {
			return diffreport.Input{}, err
		}
		defer release()
		o.mu.Lock()
		defer o.mu.Unlock()
		o.refresh(readContext(s.ctx, r.Context()), s.open.policy)
		ss := o.session()
		return diffreport.Input{Name: name, Session: ss, Exchanges: exchangesOf(ss)}, nil
	}
	ina, erra := in(ia, v.AName)
	inb, errb := in(ib, v.BName)
	if err := errors.Join(erra, errb); err != nil {
		v.Problem = err.Error()
		s.render(w, r, http.StatusServiceUnavailable, "compare", "Compare", v)
		return
	}
	res := diffreport.Build(ina, inb, diffreport.Options{Prices: s.opts.Prices, Policy: policy, Version: s.opts.Version})
	v.Verdict, v.Prices, v.Redaction, v.Same = res.Verdict(), res.Prices, res.Redaction, res.Same
	v.Sections = linkSections(res.Sections(), a, b)
	s.render(w, r, http.StatusOK, "compare", "Compare", v)
}

// cmpSection is a section of the comparison, its rows with links to the
// turns they name.
type cmpSection struct {
	diffreport.Section
	Rows []cmpRow
}

// cmpRow is a row of a section; Turns, when set, is its cell of turns (A
// / B) as links, each to its turn of its session.
type cmpRow struct {
	diffreport.Row
	Turns []link
}

// link is a text and where it leads ("" for plain text).
type link struct{ Text, Href string }

// turnsHead is the heading of the aligned turns' cell of turns.
const turnsHead = "turns (A / B)"

// linkSections makes the aligned turns' "3", "3 / 4", "3–5 / 4–6" or
// "– / 4" links to those turns of sessions a and b (a range to its first).
func linkSections(ss []diffreport.Section, a, b string) []cmpSection {
	out := make([]cmpSection, len(ss))
	for i, sec := range ss {
		out[i].Section = sec
		col := slices.Index(sec.Head, turnsHead)
		for _, r := range sec.Rows {
			row := cmpRow{Row: r}
			if col >= 0 && col < len(r.Cells) {
				sides := strings.Split(r.Cells[col], " / ")
				if len(sides) == 1 {
					sides = append(sides, sides[0])
				}
				for k, key := range []string{a, b} {
					if k > 0 {
						row.Turns = append(row.Turns, link{Text: " / "})
					}
					side := sides[min(k, len(sides)-1)]
					first, _, _ := strings.Cut(side, "–")
					if n, err := strconv.Atoi(first); err == nil && n > 0 {
						row.Turns = append(row.Turns, link{Text: side, Href: "/s/" + url.PathEscape(key) + "/turn/" + strconv.Itoa(n)})
					} else {
						row.Turns = append(row.Turns, link{Text: side})
					}
				}
				row.Cells = slices.Clone(r.Cells)
				row.Cells[col] = "" // drawn from Turns
			}
			out[i].Rows = append(out[i].Rows, row)
		}
	}
	return out
}

// exchangesOf are the exchanges of a session's turns (without their
// bodies), for the private values redaction looks for.
func exchangesOf(s *timeline.Session) []*exchange.Exchange {
	out := make([]*exchange.Exchange, 0, len(s.Turns))
	for _, t := range s.Turns {
		if t.Exchange != nil {
			out = append(out, t.Exchange)
		}
	}
	return out
}
