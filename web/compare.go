package web

import (
	"errors"
	"net/http"
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
	Sections  []diffreport.Section
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
	v.Sections = res.Sections()
	s.render(w, r, http.StatusOK, "compare", "Compare", v)
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
