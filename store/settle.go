package store

import (
	"context"
	"fmt"

	"github.com/tsinspect/tsinspect/exchange"
)

// SettleInFlight marks every exchange still in flight as interrupted, with
// reason as its error, and returns how many it changed. A recorder calls it
// when it opens a capture: rows left in flight then were written by a
// recorder that ended without finishing them (killed, crashed, or the
// machine lost power), and no one will finish them now. The bodies
// recorded so far are kept.
func (db *DB) SettleInFlight(ctx context.Context, reason string) (int64, error) {
	if db.readOnly {
		return 0, fmt.Errorf("store: settle in-flight exchanges: %w", ErrReadOnly)
	}
	res, err := db.sql.ExecContext(ctx, `UPDATE exchange SET state = ?, error = CASE WHEN error = '' THEN ? ELSE error END WHERE state = ?`,
		string(exchange.StateInterrupted), reason, string(exchange.StateInFlight))
	if err != nil {
		return 0, fmt.Errorf("store: settle in-flight exchanges: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: settle in-flight exchanges: %w", err)
	}
	return n, nil
}
