// Package store keeps recorded exchanges in a SQLite capture file.
//
// A capture file is an ordinary SQLite database in WAL mode, so one process
// can record into it while others read it. Its layout is created and upgraded
// by migrations embedded in this package, each applied in its own transaction
// and recorded in a schema_version table. Request and response bodies live in
// a content-addressed blob table: identical bodies are stored once.
//
// Store is the only package that talks to SQLite. Public methods open their
// own transaction; the private helpers they share take a *sql.Tx.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"
)

// Sentinel errors; test for them with errors.Is.
var (
	// ErrNotCapture is returned when a file is not a tsinspect capture:
	// not SQLite at all, or a SQLite database without our schema.
	ErrNotCapture = errors.New("not a tsinspect capture file")
	// ErrNotFound is returned when no exchange has the requested ID.
	ErrNotFound = errors.New("exchange not found")
	// ErrReadOnly is returned by the writing methods of a DB opened with
	// OpenReadOnly.
	ErrReadOnly = errors.New("capture file opened read-only")
)

// applicationID is written to the SQLite header (PRAGMA application_id) by
// the first migration: "tsin" in ASCII.
const applicationID = 0x7473696e

// rwParams are the connection settings of a read-write handle. They are part
// of the DSN, so that every connection the pool opens gets them; a PRAGMA run
// with Exec would reach one pooled connection only.
const rwParams = "_journal_mode=WAL&_foreign_keys=on&_busy_timeout=5000&_txlock=immediate"

// roParams are the connection settings of a read-only handle. The journal
// mode is left alone: it is a property of the file and a reader cannot set it.
const roParams = "mode=ro&_busy_timeout=5000"

// immutableParams are those of a handle on a file in a directory nothing
// may be written to: SQLite takes the file as it is, creates no -wal or
// -shm beside it and takes no lock (what a -wal already there holds is
// not read).
const immutableParams = "mode=ro&immutable=1"

//go:embed migrations/*.sql
var migrationFiles embed.FS

// DB is an open capture file. It is safe for concurrent use.
type DB struct {
	sql      *sql.DB
	path     string
	readOnly bool
	version  int64  // schema version of the file
	bases    *bases // recent bodies new ones are compressed against
	enc      encoders

	getMu     sync.Mutex
	getReader *bodyReader // shared by Get

	lock *writerLock // held by a DB from OpenWriter, released by Close
}

// Open opens the capture file at path for reading and writing, creating it
// (readable by its owner only) if it does not exist, and brings its schema up
// to date. The file is put in WAL mode, with foreign keys enforced, a 5 s busy
// timeout and write transactions that take the write lock when they begin.
//
// An existing SQLite database that is not a capture is refused with
// ErrNotCapture rather than having tables added to it.
func Open(path string) (*DB, error) {
	return openRW(path, rwParams)
}

// OpenDurable is Open with SQLite's synchronous=FULL: every committed
// exchange is on the disk before the next write begins, so that a power
// loss or an operating-system crash loses nothing that was committed.
// Open's default (NORMAL, in WAL mode) survives a crash or kill of the
// process, but a power loss may take back the last transactions; FULL
// costs an fsync per write.
func OpenDurable(path string) (*DB, error) {
	return openRW(path, rwParams+"&_sync=FULL")
}

func openRW(path, params string) (*DB, error) {
	fail := func(err error) (*DB, error) { return nil, fmt.Errorf("store: open %s: %w", path, err) }
	if err := checkWritable(path); err != nil {
		return fail(err)
	}
	if err := createPrivate(path); err != nil {
		return fail(err)
	}
	ctx := context.Background()
	// Look before touching: the DSN below would switch any SQLite file to
	// WAL mode as soon as it is opened.
	if err := checkForeign(ctx, path); err != nil {
		return fail(notCapture(err))
	}
	dsn, err := dsn(path, params)
	if err != nil {
		return fail(err)
	}
	sdb := sql.OpenDB(writerConnector{dsn: dsn})
	db := &DB{sql: sdb, path: path, bases: &bases{}}
	if err := db.migrate(ctx); err != nil {
		sdb.Close()
		return fail(notCapture(err))
	}
	return db, nil
}

// OpenReadOnly opens an existing capture file for reading. It works while
// another process is recording into the file. A missing file gives an error
// wrapping fs.ErrNotExist; a file that is not a capture, one wrapping
// ErrNotCapture.
func OpenReadOnly(path string) (*DB, error) {
	return openRead(path, roParams)
}

// OpenImmutable opens an existing capture file for reading without
// writing anything beside it: no -wal or -shm file is created and no lock
// taken, so a capture kept in a directory that must stay untouched (Claude
// Code's) is read as it is. Changes another process makes while it is
// open, and a -wal file already there, are not seen.
func OpenImmutable(path string) (*DB, error) {
	return openRead(path, immutableParams)
}

// openRead opens an existing capture for reading with the connection
// parameters params.
func openRead(path, params string) (*DB, error) {
	fail := func(err error) (*DB, error) { return nil, fmt.Errorf("store: open %s: %w", path, err) }
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail(fs.ErrNotExist)
	case err != nil:
		return fail(err)
	case fi.IsDir():
		return fail(errors.New("is a directory"))
	case !fi.Mode().IsRegular():
		return fail(fmt.Errorf("%w: %s", ErrNotCapture, kindOf(fi.Mode())))
	}
	dsn, err := dsn(path, params)
	if err != nil {
		return fail(err)
	}
	sdb, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return fail(err)
	}
	db := &DB{sql: sdb, path: path, readOnly: true, bases: &bases{}}
	if err := db.checkCapture(context.Background()); err != nil {
		sdb.Close()
		return fail(notCapture(err))
	}
	return db, nil
}

// walLimit bounds the write-ahead log of a handle that writes: it is
// checkpointed once it holds this many bytes and cut back to this size
// after each checkpoint, so that a long recording does not leave a log
// as big as the largest burst of writes next to the file.
const walLimit = 512 << 10

// writerConnector opens the connections of a read-write handle, each with
// the WAL bounds set: they are per connection and not DSN parameters.
type writerConnector struct{ dsn string }

func (c writerConnector) Connect(context.Context) (driver.Conn, error) {
	return c.Driver().Open(c.dsn)
}

func (c writerConnector) Driver() driver.Driver {
	return &sqlite3.SQLiteDriver{ConnectHook: func(conn *sqlite3.SQLiteConn) error {
		_, err := conn.Exec(fmt.Sprintf("PRAGMA journal_size_limit = %d; PRAGMA wal_autocheckpoint = %d",
			walLimit, walLimit/4096), nil)
		return err
	}}
}

// Close closes the capture file. When the last handle on a file closes, SQLite
// folds the write-ahead log back into the main file.
func (db *DB) Close() error {
	db.getMu.Lock()
	if db.getReader != nil {
		db.getReader.close()
		db.getReader = nil
	}
	db.getMu.Unlock()
	err := db.sql.Close()
	db.releaseLock()
	if err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// Path returns the path the capture file was opened with.
func (db *DB) Path() string { return db.path }

// checkWritable refuses a path that a capture must not be written to:
// anything but a regular file (after symbolic links), a file without write
// permission, or a new file in a directory that does not exist. SQLite
// would otherwise open a device or FIFO as an empty database and create its
// -wal and -shm files beside it.
func checkWritable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		dir := filepath.Dir(path)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("directory %s does not exist", dir)
		}
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		return errors.New("is a directory")
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s, not a capture file", kindOf(fi.Mode()))
	case fi.Mode().Perm()&0o222 == 0:
		return errors.New("is read-only")
	}
	return nil
}

// kindOf names a kind of file that is not a regular one.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "is a named pipe"
	case m&fs.ModeCharDevice != 0, m&fs.ModeDevice != 0:
		return "is a device"
	case m&fs.ModeSocket != 0:
		return "is a socket"
	case m.IsDir():
		return "is a directory"
	}
	return "is not a regular file"
}

// createPrivate creates an empty file at path with mode 0600 if nothing is
// there yet. SQLite treats an empty file as an empty database, and gives the
// -wal and -shm files it creates next to it the same permissions: captures
// hold whole conversations and should not be readable by other users.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// dsn builds a SQLite URI for the file at p. The path is made absolute and
// escaped, so names holding '?', '#' or '%' open the right file.
func dsn(p, params string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	abs = filepath.ToSlash(abs)
	if !strings.HasPrefix(abs, "/") {
		abs = "/" + abs // a Windows drive path: file:///C:/...
	}
	u := url.URL{Scheme: "file", Path: abs}
	return "file://" + u.EscapedPath() + "?" + params, nil
}

// notCapture turns SQLite's "file is not a database" into ErrNotCapture.
func notCapture(err error) error {
	var se sqlite3.Error
	if errors.As(err, &se) && se.Code == sqlite3.ErrNotADB {
		return ErrNotCapture
	}
	return err
}

// checkForeign refuses a file that holds something other than a capture or
// an empty database, reading it through a read-only handle of its own.
func checkForeign(ctx context.Context, path string) error {
	dsn, err := dsn(path, roParams)
	if err != nil {
		return err
	}
	sdb, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return err
	}
	defer sdb.Close()
	db := &DB{sql: sdb, path: path, readOnly: true}
	id, err := db.applicationID(ctx)
	if err != nil {
		return err
	}
	if id == applicationID {
		return nil
	}
	var objects int
	if err := sdb.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&objects); err != nil {
		return err
	}
	if id != 0 || objects > 0 {
		return ErrNotCapture
	}
	return nil
}

// checkCapture makes sure a file opened read-only is a capture this version
// of the package can read.
func (db *DB) checkCapture(ctx context.Context) error {
	id, err := db.applicationID(ctx)
	if err != nil {
		return err
	}
	if id != applicationID {
		return ErrNotCapture
	}
	var tables int
	err = db.sql.QueryRowContext(ctx,
		`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_version'`).Scan(&tables)
	if err != nil {
		return err
	}
	if tables == 0 {
		return ErrNotCapture
	}
	var version sql.NullInt64
	err = db.sql.QueryRowContext(ctx, `SELECT max(version) FROM schema_version`).Scan(&version)
	if err != nil {
		return err
	}
	migs, err := migrations()
	if err != nil {
		return err
	}
	latest := migs[len(migs)-1].version
	switch {
	case !version.Valid:
		return ErrNotCapture
	case version.Int64 > latest:
		return fmt.Errorf("capture file has schema version %d, newer than this program reads (%d)", version.Int64, latest)
	}
	// Older versions are read as they are: every change since the first
	// layout only adds to it.
	db.version = version.Int64
	return nil
}

func (db *DB) applicationID(ctx context.Context) (int64, error) {
	var id int64
	err := db.sql.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&id)
	return id, err
}

// migration is one embedded schema change.
type migration struct {
	version int64
	name    string
	sql     string
}

// migrations returns the embedded migrations in version order. A file is
// named NNNN_description.sql; versions must run 1, 2, 3... without gaps.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.ParseInt(num, 10, 64)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: name must start with a version number and '_'", base)
		}
		text, err := migrationFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(text)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != int64(i+1) {
			return nil, fmt.Errorf("migration %s: expected version %d", m.name, i+1)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no migrations embedded")
	}
	return out, nil
}

// migrate applies, in order, every migration the file has not had yet, each
// in its own transaction. The check for "already applied" is made inside that
// transaction, which holds the write lock, so two processes opening the same
// new file cannot both apply a migration.
func (db *DB) migrate(ctx context.Context) error {
	migs, err := migrations()
	if err != nil {
		return err
	}
	for _, m := range migs {
		if err := db.applyMigration(ctx, m); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	var newest int64
	if err := db.sql.QueryRowContext(ctx, `SELECT max(version) FROM schema_version`).Scan(&newest); err != nil {
		return err
	}
	if latest := migs[len(migs)-1].version; newest > latest {
		return fmt.Errorf("capture file has schema version %d, newer than this program writes (%d)", newest, latest)
	}
	db.version = newest
	return nil
}

func (db *DB) applyMigration(ctx context.Context, m migration) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
		version    INTEGER PRIMARY KEY NOT NULL,
		applied_ns INTEGER NOT NULL
	)`); err != nil {
		return err
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_version WHERE version = ?`, m.version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, applied_ns) VALUES (?, ?)`,
		m.version, time.Now().UnixNano()); err != nil {
		return err
	}
	return tx.Commit()
}
