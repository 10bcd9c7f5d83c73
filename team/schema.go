package team

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migration is one step of the schema: the version it makes, what it
// does, and its SQL (one transaction, with the others of a run).
type migration struct {
	version int
	about   string
	sql     string
}

// The sessions' summary and facts are json, not jsonb: stored and sent
// as written (a reading of every session's facts converts nothing), and
// still open to ->, ->> and json_array_elements; the findings' detail,
// which dashboards query, is jsonb.

// migrations are the schema's steps, in order; a store at version N runs
// those after N. A step is never edited once released: a change is a new
// step.
var migrations = []migration{
	{1, "sessions, turns, findings and pushers", `
CREATE TABLE pushers (
	person text NOT NULL,
	machine text NOT NULL,
	first_push timestamptz NOT NULL DEFAULT now(),
	last_push timestamptz NOT NULL DEFAULT now(),
	tsinspect_version text NOT NULL DEFAULT '',
	PRIMARY KEY (person, machine)
);
CREATE TABLE sessions (
	person text NOT NULL,
	machine text NOT NULL,
	session_id text NOT NULL,
	project text NOT NULL DEFAULT '',
	claude_version text NOT NULL DEFAULT '',
	start_at timestamptz,
	end_at timestamptz,
	turns integer NOT NULL DEFAULT 0,
	subagents integer NOT NULL DEFAULT 0,
	models text[] NOT NULL DEFAULT '{}',
	cost_usd double precision NOT NULL DEFAULT 0,
	cost_known boolean NOT NULL DEFAULT true,
	prices_taken text NOT NULL DEFAULT '',
	cache_breaks integer NOT NULL DEFAULT 0,
	cache_breaks_usd double precision NOT NULL DEFAULT 0,
	blind_calls integer NOT NULL DEFAULT 0,
	searches integer NOT NULL DEFAULT 0,
	empty_searches integer NOT NULL DEFAULT 0,
	partial_searches integer NOT NULL DEFAULT 0,
	input_tokens bigint NOT NULL DEFAULT 0,
	output_tokens bigint NOT NULL DEFAULT 0,
	cache_read_tokens bigint NOT NULL DEFAULT 0,
	cache_write_tokens bigint NOT NULL DEFAULT 0,
	redaction text NOT NULL,
	source_size bigint NOT NULL DEFAULT 0,
	source_mtime bigint NOT NULL DEFAULT 0,
	pushed_at timestamptz NOT NULL DEFAULT now(),
	summary json NOT NULL,
	facts json,
	PRIMARY KEY (person, machine, session_id)
);
CREATE INDEX sessions_end ON sessions (end_at DESC);
CREATE INDEX sessions_person ON sessions (person, end_at DESC);
CREATE INDEX sessions_project ON sessions (project, end_at DESC);
CREATE TABLE turns (
	person text NOT NULL,
	machine text NOT NULL,
	session_id text NOT NULL,
	turn integer NOT NULL,
	at timestamptz,
	model text NOT NULL DEFAULT '',
	input_tokens bigint NOT NULL DEFAULT 0,
	output_tokens bigint NOT NULL DEFAULT 0,
	cache_read_tokens bigint NOT NULL DEFAULT 0,
	cache_write_5m_tokens bigint NOT NULL DEFAULT 0,
	cache_write_1h_tokens bigint NOT NULL DEFAULT 0,
	cost_usd double precision NOT NULL DEFAULT 0,
	cache_break_lost bigint NOT NULL DEFAULT 0,
	cache_break_usd double precision NOT NULL DEFAULT 0,
	PRIMARY KEY (person, machine, session_id, turn),
	FOREIGN KEY (person, machine, session_id) REFERENCES sessions ON DELETE CASCADE
);
CREATE INDEX turns_at ON turns (at);
CREATE TABLE findings (
	person text NOT NULL,
	machine text NOT NULL,
	session_id text NOT NULL,
	kind text NOT NULL,
	seq integer NOT NULL,
	subject text NOT NULL DEFAULT '',
	usd double precision NOT NULL DEFAULT 0,
	detail jsonb NOT NULL,
	PRIMARY KEY (person, machine, session_id, kind, seq),
	FOREIGN KEY (person, machine, session_id) REFERENCES sessions ON DELETE CASCADE
);
CREATE INDEX findings_kind ON findings (kind, subject);
`},
	{2, "the listing's marks as columns, for a listing that reads no JSON", `
ALTER TABLE sessions
	ADD COLUMN requests_recorded boolean NOT NULL DEFAULT true,
	ADD COLUMN catalog_recorded boolean NOT NULL DEFAULT true,
	ADD COLUMN subagents_only boolean NOT NULL DEFAULT false,
	ADD COLUMN output_placeholders integer NOT NULL DEFAULT 0,
	ADD COLUMN priced_as text[] NOT NULL DEFAULT '{}',
	ADD COLUMN unpriced text[] NOT NULL DEFAULT '{}',
	ADD COLUMN partial_missing text[] NOT NULL DEFAULT '{}';
-- Sessions pushed before: their next push sends them again, filling these.
UPDATE sessions SET source_size = -1;
CREATE INDEX sessions_cost ON sessions (cost_usd DESC);
`},
	{3, "each request's catalog and working set, and each search with what it loaded", `
CREATE TABLE requests (
	person text NOT NULL,
	machine text NOT NULL,
	session_id text NOT NULL,
	turn integer NOT NULL,
	thread text NOT NULL DEFAULT '',
	model text NOT NULL DEFAULT '',
	catalog_size integer NOT NULL DEFAULT 0,
	working_set_size integer NOT NULL DEFAULT 0,
	catalog_added integer NOT NULL DEFAULT 0,
	catalog_removed integer NOT NULL DEFAULT 0,
	working_added integer NOT NULL DEFAULT 0,
	working_removed integer NOT NULL DEFAULT 0,
	flags text[] NOT NULL DEFAULT '{}',
	PRIMARY KEY (person, machine, session_id, turn),
	FOREIGN KEY (person, machine, session_id) REFERENCES sessions ON DELETE CASCADE
);
CREATE TABLE searches (
	person text NOT NULL,
	machine text NOT NULL,
	session_id text NOT NULL,
	turn integer NOT NULL,
	seq integer NOT NULL,
	mode text NOT NULL DEFAULT '',
	server boolean NOT NULL DEFAULT false,
	query text NOT NULL DEFAULT '',
	loaded text[] NOT NULL DEFAULT '{}',
	no_match boolean NOT NULL DEFAULT false,
	PRIMARY KEY (person, machine, session_id, turn, seq),
	FOREIGN KEY (person, machine, session_id) REFERENCES sessions ON DELETE CASCADE
);
-- Sessions pushed before: their next push sends them again, filling these.
UPDATE sessions SET source_size = -1;
`},
}

// SchemaVersion is the version this tsinspect writes and reads.
func SchemaVersion() int { return migrations[len(migrations)-1].version }

// migrateLock is the advisory lock that keeps two migrating pushers apart.
const migrateLock = 0x7473696e73 // "tsins"

// readVersion is the store's schema version, 0 when it has none.
func readVersion(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int, error) {
	var v int
	err := q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table
		return 0, nil
	}
	return v, err
}

// Migrate brings the store's schema to SchemaVersion: nothing when it is
// there (a reader needs no write right for it), else the missing steps in
// one transaction under an advisory lock, so that pushers starting at
// once migrate once. A store newer than this tsinspect is an error.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	v, err := readVersion(ctx, pool)
	if err != nil {
		return fmt.Errorf("reading the schema version: %w", err)
	}
	if v == SchemaVersion() {
		return nil
	}
	if v > SchemaVersion() {
		return fmt.Errorf("the store's schema is version %d, newer than this tsinspect's %d: upgrade tsinspect", v, SchemaVersion())
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
	version integer PRIMARY KEY,
	about text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		if v, err = readVersion(ctx, tx); err != nil {
			return err
		}
		for _, m := range migrations {
			if m.version <= v {
				continue
			}
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("schema step %d (%s): %w", m.version, m.about, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_version (version, about) VALUES ($1, $2)`, m.version, m.about); err != nil {
				return err
			}
		}
		return nil
	})
}
