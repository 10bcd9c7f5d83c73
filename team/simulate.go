package team

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/catalog"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// SimOptions say what team Simulate makes: People people (person-0001,
// ...) of Sessions sessions each, shaped as the sessions under Roots (the
// public real sessions in the benchmark), spread over Days days up to
// Newest, in Projects projects.
type SimOptions struct {
	URL                           string
	Roots                         []string
	People, Sessions, FirstPerson int
	Days, Projects                int
	Newest                        time.Time
	Prices                        *pricing.Table
	Log                           io.Writer
}

// shape is one real session as the store would hold it.
type shape struct {
	sum   *sessionfiles.Summary
	row   sessionfiles.Row
	sumJS []byte
	facts *advice.Facts
}

// Simulate writes a simulated team's sessions straight into the store
// (COPY, no push): each a real session's figures, summary and advice
// facts under a new ID, person, project and time, with its findings, and
// returns how many sessions it wrote. Turns are not written (a push
// writes them); the benchmark of the team's listing and advice rests on
// the sessions and their facts.
func Simulate(ctx context.Context, o SimOptions) (int, error) {
	const op = "simulate"
	t, err := ParseURL(o.URL)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	pool, err := connect(ctx, t, op)
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	if err := Migrate(ctx, pool); err != nil {
		return 0, t.Explain(op, err)
	}
	shapes, err := readShapes(o)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	cols := []string{"person", "machine", "session_id", "project", "claude_version", "start_at", "end_at", "turns", "subagents", "models",
		"cost_usd", "cost_known", "prices_taken", "cache_breaks", "cache_breaks_usd", "blind_calls", "searches", "empty_searches", "partial_searches",
		"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "redaction", "source_size", "source_mtime", "summary", "facts",
		"requests_recorded", "catalog_recorded", "subagents_only", "output_placeholders", "priced_as", "unpriced", "partial_missing"}
	span := time.Duration(o.Days) * 24 * time.Hour
	written := 0
	for p := o.FirstPerson; p < o.FirstPerson+o.People; p++ {
		person := fmt.Sprintf("person-%04d", p)
		var rows [][]any
		var found [][]any
		for j := range o.Sessions {
			n := p*o.Sessions + j
			sh := shapes[n%len(shapes)]
			r := sh.row
			// Spread evenly back from Newest, the same shape at other times.
			end := o.Newest.Add(-time.Duration(int64(span) / int64(o.Sessions) * int64(j)))
			start := end.Add(-r.End.Sub(r.Start))
			id := fmt.Sprintf("%08x-0000-4000-8000-%012x", p, j)
			project := fmt.Sprintf("project-%02d", (p*7+j)%max(o.Projects, 1))
			f := *sh.facts
			f.Ref, f.Start, f.End = advice.Ref{ID: id, Project: project}, start, end
			fj, err := json.Marshal(&f)
			if err != nil {
				return written, err
			}
			fs, err := findingsOf(fj)
			if err != nil {
				return written, err
			}
			rows = append(rows, []any{person, "laptop", id, project, r.Version, start, end, r.Turns, r.Subagents, texts(r.Models),
				r.CostUSD, r.CostKnown, r.PricesTaken, r.CacheBreaks, r.BreaksUSD, r.BlindCalls, r.Searches, r.EmptySearches, r.PartialSearches,
				r.InputTokens, r.OutputTokens, r.CacheRead, r.CacheWrite, string(redact.Default), int64(1), end.UnixNano(), string(sh.sumJS), string(fj),
				r.Requests, r.CatalogRecorded, r.SubagentsOnly, r.OutputPlaceholders, texts(r.PricedAs), texts(r.Unpriced), texts(r.PartialMissing)})
			for _, fd := range fs {
				found = append(found, []any{person, "laptop", id, fd.kind, fd.seq, fd.subject, fd.usd, fd.detail})
			}
		}
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"sessions"}, cols, pgx.CopyFromRows(rows)); err != nil {
				return err
			}
			_, err := tx.CopyFrom(ctx, pgx.Identifier{"findings"}, []string{"person", "machine", "session_id", "kind", "seq", "subject", "usd", "detail"}, pgx.CopyFromRows(found))
			return err
		})
		if err != nil {
			return written, t.Explain(op, err)
		}
		written += len(rows)
	}
	if _, err := pool.Exec(ctx, `ANALYZE sessions; ANALYZE findings`); err != nil {
		return written, t.Explain(op, err)
	}
	return written, nil
}

// readShapes reads the sessions under o.Roots with their advice facts.
func readShapes(o SimOptions) ([]shape, error) {
	c, sums, _, err := catalog.OpenRead(o.Log, catalog.Options{NoIndex: true}, o.Roots...)
	if err != nil {
		return nil, err
	}
	fs, _, err := c.Facts(catalog.Query{}, catalog.FactsOptions{Prices: o.Prices, NoCache: true})
	if err != nil {
		return nil, err
	}
	byID := map[string]*advice.Facts{}
	for _, f := range fs {
		byID[f.ID] = f
	}
	var out []shape
	for _, s := range sums {
		f := byID[s.ID]
		if f == nil || s.Turns == 0 {
			continue
		}
		rs := redactSummary(s, redact.Default)
		js, err := json.Marshal(rs)
		if err != nil {
			return nil, err
		}
		out = append(out, shape{sum: rs, row: sessionfiles.RowOf(s, o.Prices), sumJS: js, facts: redactFacts(f, s, redact.Default)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no sessions with advice facts under %v", o.Roots)
	}
	return out, nil
}
