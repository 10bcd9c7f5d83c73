package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// listingAge is how stale the listing may be when a page asks for it: it
// is read again (what changed) at most this often.
const listingAge = time.Second

// sessionsPage is the list of every session.
func (s *Server) sessionsPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "sessions", "Sessions", nil)
}

// sessionsData is the sessions page's rows, totals and chart, for the
// filters of the query: project, since, model, flagged, sort (as
// 'tsinspect sessions' has them).
func (s *Server) sessionsData(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	q := query{Project: v.Get("project"), Model: v.Get("model"), Flagged: v.Get("flagged") == "1", Sort: v.Get("sort"), By: v.Get("by")}
	if q.By == "" {
		q.By = "day"
	}
	if q.By != "day" && q.By != "week" {
		jsonError(w, http.StatusBadRequest, fmt.Sprintf("by %q: want day or week", q.By))
		return
	}
	switch q.Sort {
	case "":
		q.Sort = "time"
	case "time", "cost", "flags", "turns":
	default:
		jsonError(w, http.StatusBadRequest, fmt.Sprintf("sort %q: want time, cost, flags or turns", q.Sort))
		return
	}
	if since := v.Get("since"); since != "" {
		from, err := sessionfiles.ParseSince(since, time.Now())
		if err != nil {
			jsonError(w, http.StatusBadRequest, fmt.Sprintf("since %q: %v", since, err))
			return
		}
		q.From = from
	}
	if _, err := s.list.refresh(r.Context(), listingAge); err != nil {
		jsonError(w, http.StatusInternalServerError, s.scrubFor(r, err.Error()))
		return
	}
	out, err := s.list.view(q, s.policyOf(r) != redact.Off)
	if err != nil {
		jsonError(w, http.StatusInternalServerError, s.scrubFor(r, err.Error()))
		return
	}
	if len(out.Chart) > 0 {
		var b strings.Builder
		if err := s.frags.write(&b, "figure", dayFigure(out.Chart, q.By, "("+out.ChartOf+")")); err != nil {
			jsonError(w, http.StatusInternalServerError, err.Error())
			return
		}
		out.ChartSVG = safeHTML(b.String())
	}
	writeJSON(w, out)
}

// sessionsEvents tells a sessions page when the listing changed (a new
// session, one that grew), looking every two seconds while the page is
// open.
func (s *Server) sessionsEvents(w http.ResponseWriter, r *http.Request) {
	send, ok := s.eventStream(w)
	if !ok {
		return
	}
	gen, _ := s.list.refresh(r.Context(), listingAge)
	if send("listing", fmt.Sprintf(`{"gen":%d}`, gen)) != nil {
		return
	}
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	beat := time.Now()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
		g, err := s.list.refresh(r.Context(), listingAge)
		switch {
		case err != nil:
			if send("problem", jsonText(s.scrubFor(r, err.Error()))) != nil {
				return
			}
		case g != gen:
			gen = g
			if send("listing", fmt.Sprintf(`{"gen":%d}`, gen)) != nil {
				return
			}
			beat = time.Now()
		case time.Since(beat) > 15*time.Second:
			if send("", "") != nil {
				return
			}
			beat = time.Now()
		}
	}
}

// eventStream starts a stream of server-sent events; send writes one
// (an empty event is a comment that keeps the connection alive).
// Each event must be written within the server's write timeout: a client
// that stops reading is cut off.
func (s *Server) eventStream(w http.ResponseWriter) (send func(event, data string) error, ok bool) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "tsinspect serve: no streaming on this connection", http.StatusInternalServerError)
		return nil, false
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	rc := http.NewResponseController(w)
	return func(event, data string) error {
		rc.SetWriteDeadline(time.Now().Add(s.opts.WriteTimeout))
		var err error
		if event == "" {
			_, err = fmt.Fprint(w, ": alive\n\n")
		} else {
			_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, safeJSON([]byte(data)))
		}
		if err == nil {
			fl.Flush()
		}
		return err
	}, true
}

// writeJSON writes v as JSON.
func writeJSON(w http.ResponseWriter, v any) {
	b, err := marshalSafe(v)
	if err != nil {
		jsonError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSONBytes(w, b)
}

// writeJSONBytes writes b, JSON, as a response no one caches.
func writeJSONBytes(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b)
}

// jsonError writes {"error": msg}.
func jsonError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":%s}`, safeJSON([]byte(jsonText(msg))))
}

// jsonText is s as a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
