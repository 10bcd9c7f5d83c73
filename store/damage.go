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

func lastID(ids []int64) int64 {
	if len(ids) == 0 {
		return 0
	}
	return ids[len(ids)-1]
}

// rowsMissingBodies names the exchanges whose request, response or decoded
// response body is not in the blob table (a scan leaves them out).
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
