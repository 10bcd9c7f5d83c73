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
	body        template.HTML
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
	v := adviceView{Pending: !a.finished, Done: a.done, Total: a.total, Body: a.body, Err: a.err}
	a.mu.Unlock()
	s.render(w, http.StatusOK, "advice", "Advice", v)
}

// readAdvice reads the sessions of the server's roots for their advice.
func (s *Server) readAdvice() {
	a := &s.advice
	finish := func(body template.HTML, err string) {
		a.mu.Lock()
		a.body, a.err, a.finished = body, err, true
		a.mu.Unlock()
	}
	if t := s.opts.Team; t != nil {
		facts, err := t.Facts(s.ctx)
		if err != nil {
			finish("", s.scrub(err.Error()))
			return
		}
		s.writeAdvice(facts, finish)
		return
	}
	var items []gather.Item
	seen := map[string]bool{}
	for _, root := range append(append([]string{}, s.opts.Roots...), s.opts.Files...) {
		its, err := gather.Items(root)
		if err != nil {
			finish("", s.scrub(err.Error()))
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
		finish("", s.scrub(err.Error()))
		return
	}
	s.writeAdvice(facts, finish)
}

// writeAdvice finds the advice of facts and finishes the page with it.
func (s *Server) writeAdvice(facts []*advice.Facts, finish func(template.HTML, string)) {
	res := redact.Advice(advice.Advise(facts, advice.Options{Prices: s.opts.Prices.Describe()}), s.opts.Policy)
	var b bytes.Buffer
	if err := res.WriteHTMLBody(&b); err != nil {
		finish("", s.scrub(err.Error()))
		return
	}
	finish(template.HTML(b.String()), "")
}
