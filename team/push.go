package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tsinspect/tsinspect/catalog"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// PushOptions say what Push sends, where and as whom.
type PushOptions struct {
	// URL is the store's address (postgres://...).
	URL string
	// Person and Machine name who pushes: the store keys each session by
	// them and its ID, so that people's and machines' sessions never
	// replace one another.
	Person, Machine string
	// Roots are the directories of Claude Code sessions pushed (none:
	// Claude Code's own).
	Roots []string
	// Policy is the redaction of what is pushed (redact.Default unless
	// the user switched it off).
	Policy redact.Policy
	// Prices prices every figure pushed.
	Prices *pricing.Table
	// Version is tsinspect's, kept with the pusher.
	Version string
	// Follow keeps pushing what Claude Code writes, every Interval (0:
	// two seconds), until ctx ends; a lost server is waited for.
	Follow   bool
	Interval time.Duration
	// Log is told what was pushed and what went wrong, a line each.
	Log io.Writer
	// Progress, when set, is called after each session is stored.
	Progress func(done, total int)
}

// PushStats says what a Push did.
type PushStats struct {
	// Sessions counts the sessions found, Pushed those sent (new or
	// changed), Unchanged those the store held as they are; Turns counts
	// the rows of answered turns sent (a listing's turns count requests,
	// those without an answer too).
	Sessions, Pushed, Unchanged, Turns int
}

// CheckName says what is wrong with a person's or machine's name.
func CheckName(flag, name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return fmt.Errorf("%s: empty: name who pushes (the store groups sessions by it)", flag)
	case len(name) > 200:
		return fmt.Errorf("%s: %d characters: at most 200", flag, len(name))
	case strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return fmt.Errorf("%s %q: control characters are not allowed", flag, name)
	}
	return nil
}

// Push sends the sessions under o.Roots to the store at o.URL: each new
// or changed session in a transaction of its own (a push cut off keeps
// what it stored, and the next one goes on from there), a session pushed
// again replacing itself. With o.Follow it goes on until ctx ends,
// waiting out a server that went away.
func Push(ctx context.Context, o PushOptions) (PushStats, error) {
	const op = "push"
	t, err := ParseURL(o.URL)
	if err != nil {
		return PushStats{}, fmt.Errorf("%s: %w", op, err)
	}
	if err := errors.Join(CheckName("--person", o.Person), CheckName("--machine", o.Machine)); err != nil {
		return PushStats{}, fmt.Errorf("%s: %w", op, err)
	}
	if o.Policy == "" {
		o.Policy = redact.Default
	}
	if o.Interval <= 0 {
		o.Interval = 2 * time.Second
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	c, err := catalog.Open(catalog.Options{}, o.Roots...)
	if err != nil {
		return PushStats{}, fmt.Errorf("%s: %w", op, err)
	}
	p := &pusher{o: o, t: t, cat: c}
	var pool *pgxpool.Pool
	for {
		if pool == nil {
			if pool, err = p.open(ctx); err != nil && !(o.Follow && transient(errors.Unwrap(err))) {
				return p.st, err
			}
		}
		if pool != nil {
			err = p.once(ctx, pool)
			if err == nil && !o.Follow {
				pool.Close()
				return p.st, nil
			}
		}
		if err != nil {
			said := t.Explain(op, err)
			var oe errOpen
			if errors.As(err, &oe) {
				said = oe.err // said when it happened
			}
			if !o.Follow || !transient(err) {
				if pool != nil {
					pool.Close()
				}
				return p.st, said
			}
			fmt.Fprintf(o.Log, "tsinspect: %v; trying again in %s\n", said, o.Interval)
		}
		select {
		case <-ctx.Done():
			if pool != nil {
				pool.Close()
			}
			return p.st, nil
		case <-time.After(o.Interval):
		}
		c.Refresh()
	}
}

// pusher is one Push's state.
type pusher struct {
	o   PushOptions
	t   Target
	cat *catalog.Catalog
	st  PushStats
}

// errOpen marks a failure to connect or migrate, the cause wrapped.
type errOpen struct{ err, cause error }

func (e errOpen) Error() string { return e.err.Error() }
func (e errOpen) Unwrap() error { return e.cause }

// open connects and brings the schema up to date.
func (p *pusher) open(ctx context.Context) (*pgxpool.Pool, error) {
	pool, err := connect(ctx, p.t, "push")
	if err != nil {
		return nil, errOpen{err, errors.Unwrap(err)}
	}
	if err := Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, errOpen{p.t.Explain("push: creating the schema", err), err}
	}
	return pool, nil
}

// stamp is what the store knows of a session it holds.
type stamp struct {
	size, mtime int64
	turns       int
}

// once pushes the sessions that changed since the store last had them.
func (p *pusher) once(ctx context.Context, pool *pgxpool.Pool) error {
	sums, sst := p.cat.Read(p.cat.Entries, nil)
	for _, e := range sst.Failed {
		fmt.Fprintf(p.o.Log, "tsinspect: warning: %v\n", e)
	}
	for _, w := range p.cat.Warnings {
		fmt.Fprintf(p.o.Log, "tsinspect: warning: %s\n", w)
	}
	entries := map[string]sessionfiles.Entry{}
	for _, e := range p.cat.Entries {
		entries[e.Path] = e
	}
	held := map[string]stamp{}
	rows, err := pool.Query(ctx, `SELECT session_id, source_size, source_mtime, turns FROM sessions WHERE person = $1 AND machine = $2`, p.o.Person, p.o.Machine)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id string
		var s stamp
		if err := rows.Scan(&id, &s.size, &s.mtime, &s.turns); err != nil {
			rows.Close()
			return err
		}
		held[id] = s
	}
	if err := rows.Err(); err != nil {
		return err
	}
	var todo []*sessionfiles.Summary
	sessions := 0
	for _, s := range sums {
		if s.Turns == 0 && s.Start.IsZero() && s.BadLines == 0 {
			continue // no conversation: not a row of the listing
		}
		sessions++
		e := entries[s.Path]
		if h, ok := held[sessionID(s.ID, p.o.Policy)]; ok && h.size == e.Size && h.mtime == e.ModTime.UnixNano() {
			continue
		}
		todo = append(todo, s)
	}
	p.st.Sessions, p.st.Unchanged = sessions, sessions-len(todo)
	if len(todo) == 0 {
		return nil
	}
	if _, err := pool.Exec(ctx, `INSERT INTO pushers (person, machine, tsinspect_version) VALUES ($1, $2, $3)
ON CONFLICT (person, machine) DO UPDATE SET last_push = now(), tsinspect_version = EXCLUDED.tsinspect_version`, p.o.Person, p.o.Machine, p.o.Version); err != nil {
		return err
	}
	for i, s := range todo {
		e := entries[s.Path]
		from := held[sessionID(s.ID, p.o.Policy)].turns
		rd, err := readSession(ctx, e, p.o.Prices, p.o.Policy)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fmt.Fprintf(p.o.Log, "tsinspect: warning: %s: %v: pushed without its requests and advice facts\n", e.Path, err)
			rd = &sessionRead{}
		} else if rd.warning != "" {
			fmt.Fprintf(p.o.Log, "tsinspect: warning: %s: %s\n", e.Path, rd.warning)
		}
		n, err := p.store(ctx, pool, s, rd, e, from)
		if err != nil {
			return err
		}
		p.st.Pushed++
		p.st.Turns += n
		if p.o.Progress != nil {
			p.o.Progress(i+1, len(todo))
		}
	}
	return nil
}

// store writes one session in one transaction: its row (replacing the
// one held), its turns from turn from-1 on (those before are held as
// they were; the last held is sent again, its answer may have grown), and
// its findings afresh. It returns how many turns it sent.
func (p *pusher) store(ctx context.Context, pool *pgxpool.Pool, s *sessionfiles.Summary, rd *sessionRead, e sessionfiles.Entry, from int) (int, error) {
	f := rd.facts
	tab, pol := p.o.Prices, p.o.Policy
	rs := redactSummary(s, pol)
	row := sessionfiles.RowOf(s, tab)
	sum, err := json.Marshal(rs)
	if err != nil {
		return 0, err
	}
	var factsJSON []byte
	var found []finding
	if f != nil {
		rf := redactFacts(f, s, pol)
		if factsJSON, err = json.Marshal(rf); err != nil {
			return 0, err
		}
		if found, err = findingsOf(factsJSON); err != nil {
			return 0, err
		}
	}
	key := []any{p.o.Person, p.o.Machine, rs.ID}
	turns := turnRows(s, tab)
	from = max(0, min(from-1, len(turns)))
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, upsertSession, append(key, rs.Project, row.Version, nullTime(row.Start), nullTime(row.End), row.Turns, row.Subagents, texts(row.Models),
			row.CostUSD, row.CostKnown, row.PricesTaken, row.CacheBreaks, row.BreaksUSD, row.BlindCalls, row.Searches, row.EmptySearches, row.PartialSearches,
			row.InputTokens, row.OutputTokens, row.CacheRead, row.CacheWrite, string(pol), e.Size, e.ModTime.UnixNano(), sum, nullJSON(factsJSON),
			row.Requests, row.CatalogRecorded, row.SubagentsOnly, row.OutputPlaceholders, texts(row.PricedAs), texts(row.Unpriced), texts(rs.PartialMissing))...)
		if err != nil {
			return err
		}
		b := &pgx.Batch{}
		b.Queue(`DELETE FROM turns WHERE person = $1 AND machine = $2 AND session_id = $3 AND turn >= $4`, append(key, len(turns))...)
		for _, r := range turns[from:] {
			b.Queue(upsertTurn, append(key, r...)...)
		}
		b.Queue(`DELETE FROM findings WHERE person = $1 AND machine = $2 AND session_id = $3`, key...)
		for _, fd := range found {
			b.Queue(`INSERT INTO findings (person, machine, session_id, kind, seq, subject, usd, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
				append(key, fd.kind, fd.seq, fd.subject, fd.usd, fd.detail)...)
		}
		b.Queue(`DELETE FROM requests WHERE person = $1 AND machine = $2 AND session_id = $3`, key...)
		b.Queue(`DELETE FROM searches WHERE person = $1 AND machine = $2 AND session_id = $3`, key...)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		if err := copyRows(ctx, tx, "requests", requestColumns, key, rd.requests); err != nil {
			return err
		}
		return copyRows(ctx, tx, "searches", searchColumns, key, rd.searches)
	})
	return len(turns) - from, err
}

const upsertSession = `INSERT INTO sessions (person, machine, session_id, project, claude_version, start_at, end_at, turns, subagents, models,
	cost_usd, cost_known, prices_taken, cache_breaks, cache_breaks_usd, blind_calls, searches, empty_searches, partial_searches,
	input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, redaction, source_size, source_mtime, summary, facts,
	requests_recorded, catalog_recorded, subagents_only, output_placeholders, priced_as, unpriced, partial_missing)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28,
	$29, $30, $31, $32, $33, $34, $35)
ON CONFLICT (person, machine, session_id) DO UPDATE SET project = EXCLUDED.project, claude_version = EXCLUDED.claude_version,
	start_at = EXCLUDED.start_at, end_at = EXCLUDED.end_at, turns = EXCLUDED.turns, subagents = EXCLUDED.subagents, models = EXCLUDED.models,
	cost_usd = EXCLUDED.cost_usd, cost_known = EXCLUDED.cost_known, prices_taken = EXCLUDED.prices_taken, cache_breaks = EXCLUDED.cache_breaks,
	cache_breaks_usd = EXCLUDED.cache_breaks_usd, blind_calls = EXCLUDED.blind_calls, searches = EXCLUDED.searches,
	empty_searches = EXCLUDED.empty_searches, partial_searches = EXCLUDED.partial_searches, input_tokens = EXCLUDED.input_tokens,
	output_tokens = EXCLUDED.output_tokens, cache_read_tokens = EXCLUDED.cache_read_tokens, cache_write_tokens = EXCLUDED.cache_write_tokens,
	redaction = EXCLUDED.redaction, source_size = EXCLUDED.source_size, source_mtime = EXCLUDED.source_mtime, pushed_at = now(),
	summary = EXCLUDED.summary, facts = EXCLUDED.facts, requests_recorded = EXCLUDED.requests_recorded,
	catalog_recorded = EXCLUDED.catalog_recorded, subagents_only = EXCLUDED.subagents_only,
	output_placeholders = EXCLUDED.output_placeholders, priced_as = EXCLUDED.priced_as, unpriced = EXCLUDED.unpriced,
	partial_missing = EXCLUDED.partial_missing`

const upsertTurn = `INSERT INTO turns (person, machine, session_id, turn, at, model, input_tokens, output_tokens, cache_read_tokens,
	cache_write_5m_tokens, cache_write_1h_tokens, cost_usd, cache_break_lost, cache_break_usd)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
ON CONFLICT (person, machine, session_id, turn) DO UPDATE SET at = EXCLUDED.at, model = EXCLUDED.model, input_tokens = EXCLUDED.input_tokens,
	output_tokens = EXCLUDED.output_tokens, cache_read_tokens = EXCLUDED.cache_read_tokens, cache_write_5m_tokens = EXCLUDED.cache_write_5m_tokens,
	cache_write_1h_tokens = EXCLUDED.cache_write_1h_tokens, cost_usd = EXCLUDED.cost_usd, cache_break_lost = EXCLUDED.cache_break_lost,
	cache_break_usd = EXCLUDED.cache_break_usd`

// turnRows are the values of each answered turn's row after the key: its
// index, time, model, tokens, cost, and the cache break it had.
func turnRows(s *sessionfiles.Summary, tab *pricing.Table) [][]any {
	lost := map[int]int64{}
	for _, b := range s.Breaks {
		lost[b.Turn] += b.Lost
	}
	out := make([][]any, len(s.Usage))
	for i, u := range s.Usage {
		one := sessionfiles.Summary{Usage: []sessionfiles.TurnUsage{u}}
		if l := lost[i]; l > 0 {
			one.Breaks = []sessionfiles.Break{{Turn: 0, Lost: l}}
		}
		c := one.Cost(tab)
		out[i] = []any{i, nullTime(u.At), u.Model, u.Input, u.Output, u.CacheRead, u.CacheWrite5m, u.CacheWrite1h, c.USD, lost[i], c.BreaksUSD}
	}
	return out
}

// copyRows writes rows, each after key, into table's key and cols.
func copyRows(ctx context.Context, tx pgx.Tx, table string, cols []string, key []any, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	all := make([][]any, len(rows))
	for i, r := range rows {
		all[i] = append(append([]any{}, key...), r...)
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{table}, append([]string{"person", "machine", "session_id"}, cols...), pgx.CopyFromRows(all))
	return err
}

// texts is ss as a text[] (never NULL).
func texts(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// nullTime is t, or NULL when it is zero.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// nullJSON is b as jsonb, or NULL when there is none.
func nullJSON(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}
