package otlp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/source"
)

// ShowURL is the traces URL raw without its query, which might hold a
// token: what may be printed of it.
func ShowURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the collector"
	}
	u.RawQuery, u.Fragment = "", ""
	return u.String()
}

// Send sends a capture's exchanges to the collector of cfg as one trace
// named by seed, redacted under policy, and waits until every span is
// delivered or given up on. version is tsinspect's. It returns the trace
// and what became of its spans.
func Send(cfg Config, exs []exchange.Exchange, seed string, policy redact.Policy, version string) (*Session, Stats) {
	s := FromExchanges(exs, seed, policy, version, pricing.Default())
	exp := NewExporter(cfg, Options{ServiceVersion: version, QueueSize: 1 << 16})
	exp.Enqueue(s.Spans())
	// Every retry of every batch fits in this budget.
	ctx, cancel := context.WithTimeout(context.Background(), 4*cfg.Timeout+30*time.Second)
	defer cancel()
	return s, exp.Close(ctx)
}

// LiveExport follows a recording and exports its turns as they complete.
type LiveExport struct {
	live *Live
	url  string
}

// StartLiveExport starts the live export of a recording to the collector
// of cfg; seed names its trace, version is tsinspect's.
func StartLiveExport(cfg Config, seed string, policy redact.Policy, version string) *LiveExport {
	exp := NewExporter(cfg, Options{ServiceVersion: version})
	return &LiveExport{live: NewLive(exp, seed, policy, version, pricing.Default()), url: ShowURL(cfg.URL)}
}

// Observe takes an exchange of the recording as it is written.
func (l *LiveExport) Observe(ex *exchange.Exchange) { l.live.Observe(ex) }

// URL is the collector's URL as it may be printed.
func (l *LiveExport) URL() string { return l.url }

// Finish sends what is left, waiting at most a few seconds, and says on w
// what became of the spans.
func (l *LiveExport) Finish(w io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st := l.live.Close(ctx)
	line := fmt.Sprintf("  OTLP: sent %d of %d spans to %s", st.Sent, st.Spans, l.url)
	if n := st.Undelivered(); n > 0 {
		line += fmt.Sprintf("; %d not delivered (%d dropped, %d failed; last error: %s)", n, st.Dropped, st.Failed, st.LastError)
	}
	fmt.Fprintln(w, line)
}

// ExchangesSeed returns the trace seed of a capture or session whose
// exchanges are exs: started (its started_at metadata, or a session's
// ID), or the start of its first exchange.
func ExchangesSeed(started string, exs []exchange.Exchange) string {
	var first time.Time
	if len(exs) > 0 {
		first = exs[0].Start
	}
	return Seed(started, first)
}

// Sent says in one line what became of the spans of trace s sent to url.
func (s *Session) Sent(st Stats, url string) string {
	return fmt.Sprintf("sent %d of %d spans (trace %x: %s in %s) to %s",
		st.Sent, st.Spans, TraceID(s.Seed), numfmt.Count(len(s.Report.Turns), "turn", "turns"), numfmt.Count(len(s.Report.Threads), "thread", "threads"), ShowURL(url))
}

// SendFile is 'tsinspect export --format otlp': it reads the capture or
// session at path (source.Resolve, then its exchanges) and sends it as
// one trace (Send), redacted under policy, saying on log what it sent.
// notOpened makes the error of a path that cannot be opened (err wrapped
// as "export: ...").
func SendFile(cfg Config, path string, policy redact.Policy, version string, log io.Writer, notOpened func(err error) error) error {
	resolved, err := source.Resolve(path, log)
	if err != nil {
		return notOpened(fmt.Errorf("export: %w", err))
	}
	exs, started, err := source.Exchanges(resolved)
	var oe *source.OpenError
	if errors.As(err, &oe) {
		return notOpened(fmt.Errorf("export: %w", oe.Err))
	}
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if policy == redact.Off {
		fmt.Fprintln(log, "tsinspect: warning: --redact off: the spans are not redacted and may hold paths, e-mail addresses, identifiers and secrets")
	}
	s, st := Send(cfg, exs, ExchangesSeed(started, exs), policy, version)
	fmt.Fprintln(log, "tsinspect: "+s.Sent(st, cfg.URL))
	if st.Undelivered() > 0 {
		return fmt.Errorf("export: %d spans not delivered: %s (is the collector at %s up? the same command sends them again)", st.Undelivered(), st.LastError, cfg.URL)
	}
	return nil
}
