package web

import (
	"bytes"
	"html/template"
	"net/http"
	"sync"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/gather"
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
	var items []gather.Item
	seen := map[string]bool{}
	for _, root := range append(append([]string{}, s.opts.Roots...), s.opts.Files...) {
		its, err := gather.Items(root)
		if err != nil {
			finish(nil, s.scrub(err.Error()))
			return
		}
		for _, it := range its {
			if !seen[it.Path] {
				seen[it.Path] = true
				items = append(items, it)
			}
		}
	}
	o := gather.Options{Prices: s.opts.Prices, ReadOnly: true, Progress: func(p gather.Progress) {
		a.mu.Lock()
		a.done, a.total = p.Done, p.Total
		a.mu.Unlock()
	}}
	if path, err := gather.CachePath(); err == nil {
		o.Cache = path
	}
	facts, _, err := gather.Read(items, o)
	if err != nil {
		finish(nil, s.scrub(err.Error()))
		return
	}
	adv := advice.Advise(facts, advice.Options{Prices: s.opts.Prices.Describe()})
	bodies := map[redact.Policy]template.HTML{}
	for _, p := range s.views() {
		var b bytes.Buffer
		if err := redact.Advice(adv, p).WriteHTMLBody(&b); err != nil {
			finish(nil, s.scrub(err.Error()))
			return
		}
		bodies[p] = template.HTML(b.String())
	}
	finish(bodies, "")
}
