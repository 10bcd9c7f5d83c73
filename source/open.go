package source

import (
	"bytes"
	"context"
	"fmt"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/crash"
	"github.com/tsinspect/tsinspect/store"
)

// OpenError is the error of a capture file or session that could not be
// opened, as against one that failed while it was read.
type OpenError struct{ Err error }

func (e *OpenError) Error() string { return e.Err.Error() }

func (e *OpenError) Unwrap() error { return e.Err }

// OpenScan opens the capture file or Claude Code session at path (see
// Resolve) to be read an exchange at a time, bodies included, down to the
// partial ones: scan calls fn with each, and returns the rows it could not
// read, in one line ("" for none). close closes what was opened.
func OpenScan(path string) (scan func(fn func(*exchange.Exchange) error) (string, error), close func() error, err error) {
	if IsSessionFile(path) {
		f, err := OpenFiles(path)
		if err != nil {
			return nil, nil, err
		}
		return func(fn func(*exchange.Exchange) error) (_ string, err error) {
			defer crash.Recover("read "+path, &err)
			problems, err := f.Stream(context.Background(), fn)
			return Summary(problems), err
		}, func() error { return nil }, nil
	}
	db, err := store.OpenReadOnly(path)
	if err != nil {
		return nil, nil, err
	}
	return func(fn func(*exchange.Exchange) error) (_ string, err error) {
		defer crash.Recover("read "+path, &err)
		damage, err := db.Scan(context.Background(), store.ScanOptions{Salvage: true, Partial: true}, fn)
		if len(damage) > 0 {
			return store.DamageSummary(damage), err
		}
		return "", err
	}, db.Close, nil
}

// Exchanges reads every exchange of the capture file or Claude Code
// session at path (see Resolve), with what names its trace: a capture's
// started_at metadata, a session's ID. What cannot be opened is an
// *OpenError.
func Exchanges(path string) (exs []exchange.Exchange, started string, err error) {
	defer crash.Recover("read "+path, &err)
	if IsSessionFile(path) {
		f, err := OpenFiles(path)
		if err != nil {
			return nil, "", &OpenError{err}
		}
		// A session's trace is named by its ID.
		started = f.Session().ID
		if _, err := f.Stream(context.Background(), func(ex *exchange.Exchange) error {
			// The bodies are the stream's only until this returns.
			c := *ex
			c.ReqBody, c.RespBody, c.ReqRef = bytes.Clone(ex.ReqBody), bytes.Clone(ex.RespBody), exchange.BodyRef{}
			exs = append(exs, c)
			return nil
		}); err != nil {
			return nil, "", err
		}
		return exs, started, nil
	}
	db, err := store.OpenReadOnly(path)
	if err != nil {
		return nil, "", &OpenError{err}
	}
	defer db.Close()
	if exs, err = db.Exchanges(context.Background()); err != nil {
		return nil, "", err
	}
	started, _ = db.Meta(context.Background(), "started_at")
	return exs, started, nil
}

// Rows lists the exchanges of the capture file or Claude Code session at
// path (see Resolve) as a capture's rows; damaged says which rows of a
// capture are damaged, in one line ("" for none); close closes what was
// opened. What cannot be opened, and a session that cannot be read, is an
// *OpenError.
func Rows(path string) (rows []store.Summary, damaged func() string, close func() error, err error) {
	defer crash.Recover("read "+path, &err)
	if IsSessionFile(path) {
		if rows, err = Summaries(path); err != nil {
			return nil, nil, nil, &OpenError{err}
		}
		return rows, func() string { return "" }, func() error { return nil }, nil
	}
	db, err := store.OpenReadOnly(path)
	if err != nil {
		return nil, nil, nil, &OpenError{err}
	}
	if rows, err = db.Summaries(context.Background(), 0); err != nil {
		db.Close()
		return nil, nil, nil, err
	}
	return rows, func() string {
		if damage, err := db.DamagedRows(context.Background()); err == nil && len(damage) > 0 {
			return fmt.Sprintf("%d damaged (a row whose body is missing is not listed): %s", len(damage), store.DamageNames(damage))
		}
		return ""
	}, db.Close, nil
}
