package timeline

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
)

// Turn returns the turn with 1-based index i, or nil.
func (s *Session) Turn(i int) *Turn {
	if s == nil || i < 1 || i > len(s.Turns) {
		return nil
	}
	return s.Turns[i-1]
}

// Thread returns the thread with the given ID, or nil.
func (s *Session) Thread(id string) *Thread {
	if s == nil {
		return nil
	}
	for _, th := range s.Threads {
		if th.ID == id {
			return th
		}
	}
	return nil
}

// Build decodes every exchange and analyses the session: turns (the POST
// /v1/messages exchanges, in the order given), threads, diffs and flags.
// Turn.Exchange points into exs, which must not change afterwards. Build is
// pure and may be called again on a grown capture.
func Build(exs []exchange.Exchange) *Session {
	ptrs := make([]*exchange.Exchange, len(exs))
	for i := range exs {
		ptrs[i] = &exs[i]
	}
	return build(ptrs, decodeAll(exs), nil)
}

// build analyses decoded exchanges. memo, when not nil, holds the
// analysis of the turns of an earlier build on the same exchanges and
// takes that of the new ones.
func build(exs []*exchange.Exchange, decoded []*decode.Turn, memo *analysed) *Session {
	s := &Session{Exchanges: len(exs)}
	var infos []*info
	h := newHasher()
	if memo != nil {
		h = memo.h
		if n := len(exs) - len(memo.infos); n > 0 {
			memo.infos = append(memo.infos, make([]*info, n)...)
		}
	}
	for i, ex := range exs {
		if !ex.Start.IsZero() {
			if s.FirstAt.IsZero() || ex.Start.Before(s.FirstAt) {
				s.FirstAt = ex.Start
			}
			if ex.Start.After(s.LastAt) {
				s.LastAt = ex.Start
			}
		}
		d := decoded[i]
		if d.Request.Kind != decode.KindMessages {
			continue
		}
		t := &Turn{Index: len(s.Turns) + 1, Exchange: ex, Decoded: d}
		s.Turns = append(s.Turns, t)
		var in info
		switch {
		case memo == nil:
			in = *analyse(t, h)
		case memo.infos[i] != nil && memo.infos[i].d == d:
			in = *memo.infos[i]
			in.src = memo.infos[i]
		default:
			in = *analyse(t, h)
			memo.runs++
			kept := in
			kept.t = nil
			memo.infos[i] = &kept
			in.src = &kept
		}
		// Each build has its own copy: linking, classifying and resolving
		// clients set its other fields. The slices analyse made are only
		// read from then on, and are shared.
		in.t = t
		infos = append(infos, &in)
	}
	resolveClients(infos)
	for _, in := range infos {
		in.classify()
	}
	l := newLinker(infos, memo)
	if l.linked != nil {
		defer l.linked.rollback()
	}
	s.Threads = l.link()
	kinds(s.Threads, infos)
	diffs(infos, memo)
	newSearches(s)
	(&flagRun{infos: infos}).flag()
	return s
}

// newSearches sets each turn's NewSearches: the searches of its decoded
// NewSearches that no earlier turn of its thread carried, by tool_use id
// (a search without one is its turn's own).
func newSearches(s *Session) {
	seen := map[string]map[string]bool{}
	for _, t := range s.Turns {
		if t.Decoded == nil || len(t.Decoded.NewSearches) == 0 {
			continue
		}
		ids := seen[t.Thread]
		if ids == nil {
			ids = map[string]bool{}
			seen[t.Thread] = ids
		}
		all := true
		for _, sr := range t.Decoded.NewSearches {
			all = all && (sr.ToolUseID == "" || !ids[sr.ToolUseID])
		}
		if all {
			t.NewSearches = t.Decoded.NewSearches
		} else {
			t.NewSearches = nil
			for _, sr := range t.Decoded.NewSearches {
				if sr.ToolUseID == "" || !ids[sr.ToolUseID] {
					t.NewSearches = append(t.NewSearches, sr)
				}
			}
		}
		for _, sr := range t.Decoded.NewSearches {
			if sr.ToolUseID != "" {
				ids[sr.ToolUseID] = true
			}
		}
	}
}

// decodeAll decodes every exchange, spreading the work over the CPUs, with
// one decode.Parts: a turn repeats most of the one before in its thread,
// and only what is new in it is parsed.
func decodeAll(exs []exchange.Exchange) []*decode.Turn {
	out := make([]*decode.Turn, len(exs))
	c := decode.NewParts()
	workers := min(runtime.GOMAXPROCS(0), len(exs))
	if workers <= 1 {
		for i := range exs {
			out[i] = decode.DecodeWith(&exs[i], c)
		}
		return out
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(exs) {
					return
				}
				out[i] = decode.DecodeWith(&exs[i], c)
			}
		}()
	}
	wg.Wait()
	return out
}
