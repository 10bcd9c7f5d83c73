package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/exchange"
)

// Damage names one exchange row of a capture that could not be read, and
// why. ID 0 stands for rows that could not even be listed.
type Damage struct {
	ID      int64
	Problem string
}

func (d Damage) String() string {
	if d.ID == 0 {
		return d.Problem
	}
	return fmt.Sprintf("#%d (%s)", d.ID, d.Problem)
}

// DamageSummary describes damaged rows that were skipped in one line: how
// many, and the first few by ID and cause.
func DamageSummary(ds []Damage) string {
	noun := "exchanges"
	if len(ds) == 1 {
		noun = "exchange"
	}
	return fmt.Sprintf("skipped %d damaged %s: %s", len(ds), noun, DamageNames(ds))
}

// DamageNames lists the first few damaged rows by ID and cause, and how
// many more there are.
func DamageNames(ds []Damage) string {
	const shown = 5
	var parts []string
	for i, d := range ds {
		if i == shown {
			parts = append(parts, fmt.Sprintf("and %d more", len(ds)-shown))
			break
		}
		parts = append(parts, d.String())
	}
	return strings.Join(parts, ", ")
}

// ExchangesSalvaged is Exchanges for a capture that may be damaged: a row
// that cannot be read (malformed JSON in a column, a body missing from the
// blob table, a state this program does not know, a page of the file cut
// off) is left out and named in the returned damage, and every other row
// is returned. It fails only when the capture cannot be read at all.
func (db *DB) ExchangesSalvaged(ctx context.Context) ([]exchange.Exchange, []Damage, error) {
	exs, err := db.list(ctx, 0)
	var damage []Damage
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("store: exchanges: %w", err)
		}
		exs, damage = db.rowByRow(ctx)
	}
	if missing, err := db.rowsMissingBodies(ctx); err == nil {
		damage = append(damage, missing...)
	}
	kept := exs[:0]
	for _, ex := range exs {
		if !knownState(ex.State) {
			damage = append(damage, Damage{ID: ex.ID, Problem: fmt.Sprintf("unknown state %q", ex.State)})
			continue
		}
		kept = append(kept, ex)
	}
	sort.SliceStable(damage, func(i, j int) bool { return damage[i].ID < damage[j].ID })
	if len(kept) == 0 && len(damage) > 0 && err != nil {
		return nil, damage, fmt.Errorf("store: exchanges: no row could be read: %w", err)
	}
	return kept, damage, nil
}

// rowByRow reads the exchanges one at a time, so that one that cannot be
// read costs only itself.
func (db *DB) rowByRow(ctx context.Context) ([]exchange.Exchange, []Damage) {
	var damage []Damage
	var ids []int64
	rows, err := db.sql.QueryContext(ctx, `SELECT id FROM exchange ORDER BY id`)
	if err != nil {
		return nil, []Damage{{Problem: "the exchange table could not be read: " + err.Error()}}
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			break
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		damage = append(damage, Damage{Problem: fmt.Sprintf("the rows after #%d could not be listed: %v", lastID(ids), err)})
	}
	rows.Close()
	var out []exchange.Exchange
	for _, id := range ids {
		ex, err := db.Get(ctx, id)
		switch {
		case errors.Is(err, ErrNotFound):
			// Its body is missing: rowsMissingBodies names it.
		case err != nil:
			damage = append(damage, Damage{ID: id, Problem: strings.TrimPrefix(err.Error(), fmt.Sprintf("store: get %d: exchange %d: ", id, id))})
		default:
			out = append(out, ex)
		}
	}
	return out, damage
}

func lastID(ids []int64) int64 {
	if len(ids) == 0 {
		return 0
	}
	return ids[len(ids)-1]
}

// rowsMissingBodies names the exchanges whose request, response or decoded
// response body is not in the blob table (Exchanges leaves them out).
func (db *DB) rowsMissingBodies(ctx context.Context) ([]Damage, error) {
	rows, err := db.sql.QueryContext(ctx, `
		SELECT e.id,
		       NOT EXISTS (SELECT 1 FROM blob b WHERE b.hash = e.req_body),
		       NOT EXISTS (SELECT 1 FROM blob b WHERE b.hash = e.resp_body)
		FROM exchange e
		WHERE NOT EXISTS (SELECT 1 FROM blob b WHERE b.hash = e.req_body)
		   OR NOT EXISTS (SELECT 1 FROM blob b WHERE b.hash = e.resp_body)
		ORDER BY e.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Damage
	for rows.Next() {
		var id int64
		var noReq, noResp bool
		if err := rows.Scan(&id, &noReq, &noResp); err != nil {
			return out, err
		}
		what := "request and response bodies missing"
		switch {
		case !noResp:
			what = "request body missing"
		case !noReq:
			what = "response body missing"
		}
		out = append(out, Damage{ID: id, Problem: what})
	}
	return out, rows.Err()
}

func knownState(s exchange.State) bool {
	switch s {
	case exchange.StateInFlight, exchange.StateComplete, exchange.StateClientAborted,
		exchange.StateUpstreamFailed, exchange.StateInterrupted:
		return true
	}
	return false
}

// EachExchange calls fn with every exchange in ID order, one at a time, so
// that a capture of any size is read in the memory of its largest
// exchange. Rows that cannot be read are skipped and returned as damage,
// as by ExchangesSalvaged. An error from fn stops the walk and is returned.
func (db *DB) EachExchange(ctx context.Context, fn func(*exchange.Exchange) error) ([]Damage, error) {
	damage, err := db.eachFrom(ctx, 0, fn)
	if err != nil {
		return damage, err
	}
	missing, _ := db.rowsMissingBodies(ctx)
	damage = append(damage, missing...)
	sort.SliceStable(damage, func(i, j int) bool { return damage[i].ID < damage[j].ID })
	return damage, nil
}

// StreamSalvaged is Stream over a capture that may be damaged: it reads
// the rows in one pass while they read well and, from the first that does
// not, one row at a time, so that a damaged row costs only itself. The
// skipped rows are returned as damage, as by ExchangesSalvaged. An error
// from fn stops the walk and is returned as is.
func (db *DB) StreamSalvaged(ctx context.Context, fn func(*exchange.Exchange) error) ([]Damage, error) {
	var (
		last      int64
		delivered int
		damage    []Damage
		fnErr     error
	)
	err := db.Stream(ctx, 0, func(ex *exchange.Exchange) error {
		last = ex.ID
		if !knownState(ex.State) {
			damage = append(damage, Damage{ID: ex.ID, Problem: fmt.Sprintf("unknown state %q", ex.State)})
			return nil
		}
		delivered++
		fnErr = fn(ex)
		return fnErr
	})
	switch {
	case err != nil && fnErr != nil:
		return damage, fnErr
	case err != nil && ctx.Err() != nil:
		return damage, fmt.Errorf("store: exchanges: %w", ctx.Err())
	case err != nil:
		more, rerr := db.eachFrom(ctx, last, func(ex *exchange.Exchange) error {
			delivered++
			return fn(ex)
		})
		damage = append(damage, more...)
		if rerr != nil {
			return damage, rerr
		}
		if delivered == 0 && len(damage) > 0 {
			return damage, fmt.Errorf("store: exchanges: no row could be read: %w", err)
		}
	}
	if missing, err := db.rowsMissingBodies(ctx); err == nil {
		damage = append(damage, missing...)
	}
	sort.SliceStable(damage, func(i, j int) bool { return damage[i].ID < damage[j].ID })
	return damage, nil
}

// eachFrom reads the exchanges after afterID one row at a time, skipping
// and naming those that cannot be read. Rows whose bodies are missing are
// left out silently: rowsMissingBodies names them.
func (db *DB) eachFrom(ctx context.Context, afterID int64, fn func(*exchange.Exchange) error) ([]Damage, error) {
	var ids []int64
	var damage []Damage
	rows, err := db.sql.QueryContext(ctx, `SELECT id FROM exchange WHERE id > ? ORDER BY id`, afterID)
	if err != nil {
		return nil, fmt.Errorf("store: exchanges: %w", err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			break
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		damage = append(damage, Damage{Problem: fmt.Sprintf("the rows after #%d could not be listed: %v", lastID(ids), err)})
	}
	rows.Close()
	for _, id := range ids {
		ex, err := db.Get(ctx, id)
		switch {
		case ctx.Err() != nil:
			return damage, fmt.Errorf("store: exchanges: %w", ctx.Err())
		case errors.Is(err, ErrNotFound):
			continue // its body is missing: rowsMissingBodies names it
		case err != nil:
			damage = append(damage, Damage{ID: id, Problem: strings.TrimPrefix(err.Error(), fmt.Sprintf("store: get %d: exchange %d: ", id, id))})
			continue
		case !knownState(ex.State):
			damage = append(damage, Damage{ID: id, Problem: fmt.Sprintf("unknown state %q", ex.State)})
			continue
		}
		if err := fn(&ex); err != nil {
			return damage, err
		}
	}
	return damage, nil
}

// DamagedRows names, without reading any body, the exchanges a listing
// such as Summaries leaves out or cannot trust: those whose request or
// response body is missing, and those in a state this version does not
// know.
func (db *DB) DamagedRows(ctx context.Context) ([]Damage, error) {
	out, err := db.rowsMissingBodies(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: damaged rows: %w", err)
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT id, state FROM exchange WHERE state NOT IN (?, ?, ?, ?, ?) ORDER BY id`,
		string(exchange.StateInFlight), string(exchange.StateComplete), string(exchange.StateClientAborted),
		string(exchange.StateUpstreamFailed), string(exchange.StateInterrupted))
	if err != nil {
		return nil, fmt.Errorf("store: damaged rows: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var state string
		if err := rows.Scan(&id, &state); err != nil {
			return nil, fmt.Errorf("store: damaged rows: %w", err)
		}
		out = append(out, Damage{ID: id, Problem: fmt.Sprintf("unknown state %q", state)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: damaged rows: %w", err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// StreamAfterSalvaged is ExchangesAfterSalvaged for a caller that does
// not keep request bodies, as Stream is to Each: fn gets each exchange
// after afterID that reads well, in ID order, and the ReqBody it is given
// is valid only until fn returns (its buffer is then reused). The rows
// that cannot be read are skipped and named in the damage. Like
// ExchangesAfter it reads with the reader Get shares, so a live view's
// read leaves in its cache the bodies the next exchanges are stored
// against. An error from fn stops the walk and is returned as is.
func (db *DB) StreamAfterSalvaged(ctx context.Context, afterID int64, fn func(*exchange.Exchange) error) ([]Damage, error) {
	last := afterID
	var fnErr error
	err := db.streamShared(ctx, afterID, func(ex *exchange.Exchange) error {
		last = ex.ID
		fnErr = fn(ex)
		return fnErr
	})
	switch {
	case err == nil:
		return nil, nil
	case fnErr != nil:
		return nil, fnErr
	case ctx.Err() != nil:
		return nil, fmt.Errorf("store: exchanges after %d: %w", afterID, ctx.Err())
	}
	return db.eachFrom(ctx, last, fn)
}

// ExchangesAfterSalvaged is ExchangesAfter for a capture that may hold
// damaged rows: the rows after afterID that read well are returned, and
// those that cannot be read are named in the damage, so that a reader
// following a growing capture steps past them instead of stopping there.
func (db *DB) ExchangesAfterSalvaged(ctx context.Context, afterID int64) ([]exchange.Exchange, []Damage, error) {
	out, err := db.tail(ctx, afterID)
	if err == nil {
		return out, nil, nil
	}
	if ctx.Err() != nil {
		return nil, nil, fmt.Errorf("store: exchanges after %d: %w", afterID, ctx.Err())
	}
	out = nil
	damage, err := db.eachFrom(ctx, afterID, func(ex *exchange.Exchange) error {
		out = append(out, *ex)
		return nil
	})
	return out, damage, err
}
