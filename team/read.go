package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/catalog"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// Filter says which of the store's sessions a reading keeps.
type Filter struct {
	// Person keeps one person's sessions ("" for everyone's); Project
	// those whose project (as pushed) contains it.
	Person, Project string
	// Since keeps the sessions active at or after it (zero: all).
	Since time.Time
}

// Store is a team's store opened for reading.
type Store struct {
	t    Target
	pool *pgxpool.Pool
}

// Open connects to the store at rawURL for reading: a role that may only
// read is enough once the schema is in place (a pusher creates it).
func Open(ctx context.Context, rawURL string) (*Store, error) {
	const op = "reading the team's store"
	t, err := ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	pool, err := connect(ctx, t, op)
	if err != nil {
		return nil, err
	}
	v, err := readVersion(ctx, pool)
	switch {
	case err != nil:
		pool.Close()
		return nil, t.Explain(op, err)
	case v == 0:
		pool.Close()
		return nil, fmt.Errorf("%s: %s holds no sessions yet (no schema): push some with 'tsinspect push --to URL'", op, t.Shown)
	case v > SchemaVersion():
		pool.Close()
		return nil, fmt.Errorf("%s: %s: the store's schema is version %d, newer than this tsinspect's %d: upgrade tsinspect", op, t.Shown, v, SchemaVersion())
	}
	return &Store{t: t, pool: pool}, nil
}

// Close closes the store's connections.
func (s *Store) Close() { s.pool.Close() }

// Shown is the store's address without its password.
func (s *Store) Shown() string { return s.t.Shown }

// where is the SQL condition of f and its arguments.
func (f Filter) where() (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, fmt.Sprintf(cond, len(args)))
	}
	if f.Person != "" {
		add("person = $%d", f.Person)
	}
	if f.Project != "" {
		add("strpos(project, $%d) > 0", f.Project)
	}
	if !f.Since.IsZero() {
		add("end_at >= $%d", f.Since)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// Scoped is the store seen through a filter: what the web view reads
// (web.Team).
type Scoped struct {
	s *Store
	f Filter
}

// Scope is s seen through f.
func (s *Store) Scope(f Filter) Scoped { return Scoped{s, f} }

// Summaries is Store.Summaries through the scope's filter.
func (sc Scoped) Summaries(ctx context.Context) ([]*sessionfiles.Summary, error) {
	return sc.s.Summaries(ctx, sc.f)
}

// Stamp changes whenever a push changes the sessions the scope keeps:
// their count and the time of the last push among them.
func (sc Scoped) Stamp(ctx context.Context) (string, error) {
	where, args := sc.f.where()
	var n int
	var last *time.Time
	if err := sc.s.pool.QueryRow(ctx, `SELECT count(*), max(pushed_at) FROM sessions`+where, args...).Scan(&n, &last); err != nil {
		return "", sc.s.t.Explain("reading the team's sessions", err)
	}
	if last == nil {
		return fmt.Sprint(n), nil
	}
	return fmt.Sprintf("%d %d", n, last.UnixNano()), nil
}

// Facts is Store.Facts through the scope's filter.
func (sc Scoped) Facts(ctx context.Context) ([]*advice.Facts, error) { return sc.s.Facts(ctx, sc.f) }

// Who is how a session's person, machine and project are shown together
// in the views ("alice@laptop · myrepo"): the project column of every
// listing, and what its project filter matches.
func Who(person, machine, project string) string {
	return person + "@" + machine + " · " + project
}

// Summaries reads the sessions f keeps as the listing's summaries, each
// with its person and machine in front of its project (Who): 'sessions',
// 'sessions --by' and the web view read them as they read those on disk.
func (s *Store) Summaries(ctx context.Context, f Filter) ([]*sessionfiles.Summary, error) {
	where, args := f.where()
	rows, err := s.pool.Query(ctx, `SELECT person, machine, project, summary FROM sessions`+where+` ORDER BY end_at DESC NULLS LAST`, args...)
	if err != nil {
		return nil, s.t.Explain("reading the team's sessions", err)
	}
	defer rows.Close()
	var out []*sessionfiles.Summary
	var raws [][]byte
	for rows.Next() {
		var person, machine, project string
		var raw []byte
		if err := rows.Scan(&person, &machine, &project, &raw); err != nil {
			return nil, s.t.Explain("reading the team's sessions", err)
		}
		out = append(out, &sessionfiles.Summary{Cwd: Who(person, machine, project)})
		raws = append(raws, raw)
	}
	if err := rows.Err(); err != nil {
		return nil, s.t.Explain("reading the team's sessions", err)
	}
	err = decodeAll(len(raws), func(i int) error {
		who := out[i].Cwd
		if err := json.Unmarshal(raws[i], out[i]); err != nil {
			return fmt.Errorf("reading the team's sessions: %s's session: %w", who, err)
		}
		out[i].Cwd = who
		return nil
	})
	return out, err
}

// Facts reads the advice facts of the sessions f keeps (those pushed with
// them), each session's project shown as Who: 'advise' and the web
// view's advice read them as they read those of the sessions on disk.
func (s *Store) Facts(ctx context.Context, f Filter) ([]*advice.Facts, error) {
	where, args := f.where()
	if where == "" {
		where = " WHERE facts IS NOT NULL"
	} else {
		where += " AND facts IS NOT NULL"
	}
	rows, err := s.pool.Query(ctx, `SELECT person, machine, project, session_id, facts FROM sessions`+where+` ORDER BY end_at DESC NULLS LAST`, args...)
	if err != nil {
		return nil, s.t.Explain("reading the team's advice facts", err)
	}
	defer rows.Close()
	var out []*advice.Facts
	var raws [][]byte
	for rows.Next() {
		var person, machine, project, id string
		var raw []byte
		if err := rows.Scan(&person, &machine, &project, &id, &raw); err != nil {
			return nil, s.t.Explain("reading the team's advice facts", err)
		}
		out = append(out, &advice.Facts{Ref: advice.Ref{ID: id, Project: Who(person, machine, project)}})
		raws = append(raws, raw)
	}
	if err := rows.Err(); err != nil {
		return nil, s.t.Explain("reading the team's advice facts", err)
	}
	// Decoding is most of the time: on every core.
	err = decodeAll(len(raws), func(i int) error {
		ref := out[i].Ref
		if err := json.Unmarshal(raws[i], out[i]); err != nil {
			return fmt.Errorf("reading the team's advice facts: session %s: %w", ref.ID, err)
		}
		out[i].Ref = ref
		return nil
	})
	return out, err
}

// decodeAll runs decode(i) for i below n on every core; the first error
// is returned.
func decodeAll(n int, decode func(i int) error) error {
	workers := min(runtime.GOMAXPROCS(0), max(n, 1))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				if err := decode(i); err != nil && errs[w] == nil {
					errs[w] = err
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// listingColumns are what a listing row is read from, in Row's order.
// The lists are sent as one text each, joined by the unit separator
// (split here): decoding a hundred thousand arrays is most of a
// listing's time otherwise.
const listingColumns = `person, machine, project, session_id, claude_version, start_at, end_at,
	requests_recorded, catalog_recorded, turns, subagents, subagents_only, output_placeholders, array_to_string(models, E'\x1f'),
	cost_usd, cost_known, prices_taken, cache_breaks, cache_breaks_usd, blind_calls, searches, empty_searches, partial_searches,
	array_to_string(partial_missing, E'\x1f'), input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
	array_to_string(priced_as, E'\x1f'), array_to_string(unpriced, E'\x1f')`

// list splits a list listingColumns joined (nil for none).
func list(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x1f")
}

// Listing is the catalog's answer to q over the sessions f keeps, read
// from the store's columns (no JSON: the listing of a hundred thousand
// sessions stays under a second), the figures as pushed: each row's
// project is its person, machine and project (Who).
func (s *Store) Listing(ctx context.Context, f Filter, q catalog.Query) (catalog.Listing, error) {
	const op = "reading the team's sessions"
	sql, args := listingQuery(f, q)
	// Counted first, so that the rows are made once, in place.
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM (`+sql+`) AS listing`, args...).Scan(&n); err != nil {
		return catalog.Listing{}, s.t.Explain(op, err)
	}
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return catalog.Listing{}, s.t.Explain(op, err)
	}
	defer rows.Close()
	all := make([]sessionfiles.Row, 0, n)
	for rows.Next() {
		all = append(all, sessionfiles.Row{})
		r := &all[len(all)-1]
		var person, machine, project string
		var start, end *time.Time
		var models, missing, pricedAs, unpriced string
		if err := rows.Scan(&person, &machine, &project, &r.ID, &r.Version, &start, &end,
			&r.Requests, &r.CatalogRecorded, &r.Turns, &r.Subagents, &r.SubagentsOnly, &r.OutputPlaceholders, &models, &r.CostUSD, &r.CostKnown, &r.PricesTaken,
			&r.CacheBreaks, &r.BreaksUSD, &r.BlindCalls, &r.Searches, &r.EmptySearches, &r.PartialSearches, &missing,
			&r.InputTokens, &r.OutputTokens, &r.CacheRead, &r.CacheWrite, &pricedAs, &unpriced); err != nil {
			return catalog.Listing{}, s.t.Explain(op, err)
		}
		r.Models, r.PartialMissing, r.PricedAs, r.Unpriced = list(models), list(missing), list(pricedAs), list(unpriced)
		r.Cwd, r.Project = Who(person, machine, project), project
		if start != nil {
			r.Start = *start
		}
		if end != nil {
			r.End = *end
		}
	}
	if err := rows.Err(); err != nil {
		return catalog.Listing{}, s.t.Explain(op, err)
	}
	// The store kept, ordered and cut the rows as catalog.Select does
	// (listingQuery): a hundred thousand rows are not copied and sorted
	// again.
	return catalog.Listing{Rows: all, Totals: catalog.Total(all), Notes: catalog.MarkNotes(all)}, nil
}

// orders are the SQL of each of catalog.Sorts, highest first as
// sessionfiles.SortRows orders: the rows come sorted, and the catalog's
// stable sort moves none.
var orders = map[string]string{
	"time":  "end_at DESC NULLS LAST",
	"cost":  "cost_usd DESC",
	"flags": "cache_breaks + blind_calls + empty_searches + partial_searches DESC",
	"turns": "turns DESC",
}

// listingQuery is the SQL of a listing: f's filters and q's (project,
// since, until, model, flagged) in the store, in q's order, its first
// q.Limit rows.
func listingQuery(f Filter, q catalog.Query) (string, []any) {
	where, args := f.where()
	var conds []string
	add := func(cond string, vs ...any) {
		for i := range vs {
			args = append(args, vs[i])
			cond = strings.Replace(cond, "$?", fmt.Sprintf("$%d", len(args)), 1)
		}
		conds = append(conds, cond)
	}
	if q.Project != "" {
		// catalog.ProjectMatches over Who and the project.
		add("(strpos(person || '@' || machine || ' · ' || project, $?) > 0 OR strpos(project, $?) > 0)", q.Project, catalog.ProjectDirName(q.Project))
	}
	if !q.Since.IsZero() {
		add("end_at >= $?", q.Since)
	}
	if !q.Until.IsZero() {
		add("start_at < $?", q.Until)
	}
	if q.Model != "" {
		add("EXISTS (SELECT 1 FROM unnest(models) m WHERE strpos(lower(m), lower($?)) > 0)", q.Model)
	}
	if q.Flagged {
		conds = append(conds, "cache_breaks + blind_calls + empty_searches + partial_searches > 0")
	}
	if len(conds) > 0 {
		if where == "" {
			where = " WHERE "
		} else {
			where += " AND "
		}
		where += strings.Join(conds, " AND ")
	}
	order, ok := orders[q.Sort]
	if !ok {
		order = orders["time"]
	}
	sql := `SELECT ` + listingColumns + ` FROM sessions` + where + ` ORDER BY ` + order + `, session_id`
	if q.Limit > 0 {
		sql += fmt.Sprintf(" LIMIT %d", q.Limit)
	}
	return sql, args
}
