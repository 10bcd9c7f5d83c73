package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/otlp"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/store"
)

// otlpEnvEndpoint is the --otlp value that takes the endpoint from the
// OTEL_EXPORTER_OTLP_* variables.
const otlpEnvEndpoint = "env"

// otlpConfig reads the OTLP settings: endpoint (a flag value, "" or
// "env" for the variables' own) and the OTEL_EXPORTER_OTLP_* variables.
func otlpConfig(op, endpoint string) (otlp.Config, error) {
	if endpoint == otlpEnvEndpoint {
		endpoint = ""
	}
	cfg, err := otlp.ConfigFromEnv(os.Getenv, endpoint)
	if err != nil {
		return cfg, usageError("%s: %v", op, err)
	}
	return cfg, nil
}

// showURL is the traces URL without its query, which might hold a token.
func showURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the collector"
	}
	u.RawQuery, u.Fragment = "", ""
	return u.String()
}

// captureSeed returns the trace seed of a capture: its started_at
// metadata, or the start of its first exchange.
func captureSeed(db *store.DB, first time.Time) string {
	started, _ := db.Meta(context.Background(), "started_at")
	return otlp.Seed(started, first)
}

// exportOTLP sends a capture to a collector as one trace.
func exportOTLP(env *cliEnv, path, endpoint, policyName string) error {
	policy, err := redact.ParsePolicy(policyName)
	if err != nil {
		return usageError("export: --redact %q: want default, strict or off", policyName)
	}
	cfg, err := otlpConfig("export", endpoint)
	if err != nil {
		return err
	}
	db, err := store.OpenReadOnly(path)
	if err != nil {
		return readError("export", path, fmt.Errorf("export: %w", err))
	}
	defer db.Close()
	exs, err := db.Exchanges(context.Background())
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	var first time.Time
	if len(exs) > 0 {
		first = exs[0].Start
	}
	if policy == redact.Off {
		fmt.Fprintln(env.stderr, "tsinspect: warning: --redact off: the spans are not redacted and may hold paths, e-mail addresses, identifiers and secrets")
	}
	s := otlp.FromExchanges(exs, captureSeed(db, first), policy, version, pricing.Default())
	exp := otlp.NewExporter(cfg, otlp.Options{ServiceVersion: version, QueueSize: 1 << 16})
	exp.Enqueue(s.Spans())
	// Every retry of every batch fits in this budget.
	ctx, cancel := context.WithTimeout(context.Background(), 4*cfg.Timeout+30*time.Second)
	defer cancel()
	st := exp.Close(ctx)
	line := fmt.Sprintf("tsinspect: sent %d of %d spans (trace %x: %s in %s) to %s",
		st.Sent, st.Spans, otlp.TraceID(s.Seed), numfmt.Count(len(s.Report.Turns), "turn", "turns"), numfmt.Count(len(s.Report.Threads), "thread", "threads"), showURL(cfg.URL))
	fmt.Fprintln(env.stderr, line)
	if st.Undelivered() > 0 {
		return fmt.Errorf("export: %d spans not delivered: %s", st.Undelivered(), st.LastError)
	}
	return nil
}

// liveOTLP follows a recording and exports its turns as they complete.
type liveOTLP struct {
	live *otlp.Live
	url  string
}

// startLiveOTLP starts the live export of a recording; seed names its
// trace.
func startLiveOTLP(cfg otlp.Config, seed string, policy redact.Policy) *liveOTLP {
	exp := otlp.NewExporter(cfg, otlp.Options{ServiceVersion: version})
	return &liveOTLP{live: otlp.NewLive(exp, seed, policy, version, pricing.Default()), url: showURL(cfg.URL)}
}

// finish sends what is left, waiting at most a few seconds, and says what
// became of the spans.
func (l *liveOTLP) finish(env *cliEnv) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st := l.live.Close(ctx)
	line := fmt.Sprintf("  OTLP: sent %d of %d spans to %s", st.Sent, st.Spans, l.url)
	if n := st.Undelivered(); n > 0 {
		line += fmt.Sprintf("; %d not delivered (%d dropped, %d failed; last error: %s)", n, st.Dropped, st.Failed, st.LastError)
	}
	fmt.Fprintln(env.stderr, line)
}
