package otlp

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/report"
	"github.com/tsinspect/tsinspect/timeline"
)

// FromExchanges decodes a capture's exchanges into a Session: the timeline,
// its report redacted under policy, the end of each exchange, the client
// version and, when prices is not nil, what each turn and flag cost.
// version is tsinspect's.
func FromExchanges(exs []exchange.Exchange, seed string, policy redact.Policy, version string, prices *pricing.Table) *Session {
	s := timeline.Build(exs)
	r := report.BuildWithCounts(s, version, report.CountTokens(exs))
	// The report prices every turn and flag, as every other view does
	// (nil: no prices).
	r.Price(prices)
	out := &Session{
		Report: redact.Apply(r, policy, redact.Collect(exs)),
		Seed:   seed,
		Ends:   make(map[int64]time.Time, len(exs)),
		Policy: string(policy),
	}
	for _, th := range s.Threads {
		if th.Client.ClaudeCode() && th.Client.Version != "" {
			out.ClientVersion = th.Client.Version
			break
		}
	}
	for i := range exs {
		ex := &exs[i]
		if !ex.End.IsZero() {
			out.Ends[ex.ID] = ex.End
		}
	}
	return out
}

// Live exports the turns of a capture being recorded as they complete:
// [Live.Observe] hands it each exchange the recorder writes, and a
// goroutine of its own decodes the session again and queues the spans of
// the turns that completed since. Thread and session spans, which end
// with the session, are queued by [Live.Close]. Nothing it does blocks
// the caller of Observe.
type Live struct {
	exp     *Exporter
	prices  *pricing.Table
	seed    string
	policy  redact.Policy
	version string

	mu   sync.Mutex
	exs  map[int64]exchange.Exchange
	kick chan struct{}
	stop chan struct{}
	done chan struct{}
	// sent is touched by the goroutine only, then by Close after it ended.
	sent map[int64]bool
}

// NewLive starts following a capture; its spans go to exp under the trace
// of seed, redacted under policy, priced with prices (nil: no costs).
func NewLive(exp *Exporter, seed string, policy redact.Policy, version string, prices *pricing.Table) *Live {
	l := &Live{
		exp: exp, seed: seed, policy: policy, version: version, prices: prices,
		exs: map[int64]exchange.Exchange{}, kick: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{}), sent: map[int64]bool{},
	}
	go l.loop()
	return l
}

// Observe records the latest state of an exchange. It copies the
// exchange's fields (not its bodies, which the recorder does not change
// after writing) and returns at once.
func (l *Live) Observe(ex *exchange.Exchange) {
	if ex == nil || ex.ID == 0 {
		return
	}
	l.mu.Lock()
	l.exs[ex.ID] = *ex
	l.mu.Unlock()
	if ex.State != exchange.StateInFlight {
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
}

func (l *Live) snapshot() []exchange.Exchange {
	l.mu.Lock()
	out := make([]exchange.Exchange, 0, len(l.exs))
	for _, ex := range l.exs {
		out = append(out, ex)
	}
	l.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// liveInterval bounds the pause between two rebuilds of the session.
// After each rebuild the loop rests twice as long as the rebuild took, at
// most liveInterval: a short session's turns are sent the moment they
// complete, and a long one's rebuilds take at most a third of a core.
// Exchanges that complete during the pause are exported together.
const liveInterval = 500 * time.Millisecond

func (l *Live) loop() {
	defer close(l.done)
	for {
		select {
		case <-l.stop:
			return
		case <-l.kick:
		}
		start := time.Now()
		l.flush(false)
		select {
		case <-l.stop:
			return
		case <-time.After(min(liveInterval, 2*time.Since(start))):
		}
	}
}

// flush queues the spans of the turns completed and not yet queued; with
// final, those of every turn left and of the threads and the session.
func (l *Live) flush(final bool) {
	exs := l.snapshot()
	if len(exs) == 0 {
		return
	}
	state := make(map[int64]exchange.State, len(exs))
	for i := range exs {
		state[exs[i].ID] = exs[i].State
	}
	s := FromExchanges(exs, l.seed, l.policy, l.version, l.prices)
	var spans = s.newTurnSpans(l.sent, func(id int64) bool { return final || state[id] != exchange.StateInFlight })
	if final {
		spans = append(spans, s.ThreadSpans()...)
		spans = append(spans, s.SessionSpan())
	}
	if len(spans) > 0 {
		l.exp.Enqueue(spans)
	}
}

// Close queues what is left (turns still unsent, the threads, the
// session) and closes the exporter, waiting for it until ctx is done.
func (l *Live) Close(ctx context.Context) Stats {
	close(l.stop)
	<-l.done
	l.flush(true)
	return l.exp.Close(ctx)
}
