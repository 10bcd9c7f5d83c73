package web

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sync"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/catalog"
	"github.com/tsinspect/tsinspect/redact"
)

// advising is the advice across the sessions served: read once, in the
// background, when the advice page is first asked for, from the facts
// cache 'tsinspect advise' keeps (read, never written) and the sessions
// that changed since.
type advising struct {
	once        sync.Once
	mu          sync.Mutex
	done, total int
	bodies      map[redact.Policy]template.HTML // by the policy of the view
	err         string
	finished    bool
}

// adviceView is what the advice page shows.
type adviceView struct {
	Pending     bool
	Done, Total int
	Body        template.HTML
	Err         string
}

// advicePage shows the advice, or how far reading the sessions for it got.
func (s *Server) advicePage(w http.ResponseWriter, r *http.Request) {
	a := &s.advice
	a.once.Do(func() { go s.readAdvice() })
	a.mu.Lock()
	v := adviceView{Pending: !a.finished, Done: a.done, Total: a.total, Body: a.bodies[s.policyOf(r)], Err: a.err}
	a.mu.Unlock()
	s.render(w, r, http.StatusOK, "advice", "Advice", v)
}

// readAdvice reads the sessions of the server's roots for their advice.
func (s *Server) readAdvice() {
	a := &s.advice
	finish := func(bodies map[redact.Policy]template.HTML, err string) {
		a.mu.Lock()
		a.bodies, a.err, a.finished = bodies, err, true
		a.mu.Unlock()
	}
	var facts []*advice.Facts
	if t := s.opts.Team; t != nil {
		var err error
		if facts, err = t.Facts(s.ctx); err != nil {
			finish(nil, s.scrub(err.Error()))
			return
		}
	} else {
		c, err := catalog.Open(catalog.Options{NoIndex: true, ReadOnly: true}, append(append([]string{}, s.opts.Roots...), s.opts.Files...)...)
		if err != nil {
			finish(nil, s.scrub(err.Error()))
			return
		}
		if facts, _, err = c.Facts(catalog.Query{}, catalog.FactsOptions{Prices: s.opts.Prices, Progress: func(p catalog.Progress) {
			a.mu.Lock()
			a.done, a.total = p.Done, p.Total
			a.mu.Unlock()
		}}); err != nil {
			finish(nil, s.scrub(err.Error()))
			return
		}
	}
	adv := advice.Advise(facts, advice.Options{Prices: s.opts.Prices.Describe()})
	bodies := map[redact.Policy]template.HTML{}
	for _, p := range s.views() {
		res := redact.Advice(adv, p)
		s.linkEvidence(adv, res)
		var b bytes.Buffer
		if err := res.WriteHTMLBody(&b); err != nil {
			finish(nil, s.scrub(err.Error()))
			return
		}
		bodies[p] = template.HTML(b.String())
	}
	finish(bodies, "")
}

// linkEvidence sets the link of each evidence of shown (the advice as
// redacted, evidence for evidence as whole) to the session page of the
// session whole names, at its first turn: redaction renames the
// sessions, the link still opens them.
func (s *Server) linkEvidence(whole, shown *advice.Result) {
	keys := map[string]string{}
	s.list.mu.Lock()
	for _, it := range s.list.items {
		keys[it.row.ID] = it.key
		keys[it.path] = it.key
	}
	s.list.mu.Unlock()
	for i := range shown.Advice {
		if i >= len(whole.Advice) {
			break
		}
		for j := range shown.Advice[i].Evidence {
			if j >= len(whole.Advice[i].Evidence) {
				break
			}
			e := whole.Advice[i].Evidence[j]
			key, ok := keys[e.Session]
			if !ok {
				continue
			}
			link := "/s/" + url.PathEscape(key)
			if len(e.Turns) > 0 {
				link += fmt.Sprintf("/turn/%d", e.Turns[0])
			}
			shown.Advice[i].Evidence[j].Link = link
		}
	}
}
