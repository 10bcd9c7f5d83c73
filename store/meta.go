package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// SetMeta records a capture-level fact (recorder version, mode, start
// time...) under key, replacing any earlier value.
func (db *DB) SetMeta(ctx context.Context, key, value string) error {
	if db.readOnly {
		return fmt.Errorf("store: set meta %q: %w", key, ErrReadOnly)
	}
	_, err := db.sql.ExecContext(ctx, `
		INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	if err != nil {
		return fmt.Errorf("store: set meta %q: %w", key, err)
	}
	return nil
}

// Meta returns the value recorded under key, or "" and nil if there is none.
func (db *DB) Meta(ctx context.Context, key string) (string, error) {
	var value string
	err := db.sql.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: meta %q: %w", key, err)
	}
	return value, nil
}
