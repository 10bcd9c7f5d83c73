package source

import (
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
	src, err := Open(path)
	if err != nil {
		return nil, nil, err
	}
	return func(fn func(*exchange.Exchange) error) (_ string, err error) {
		defer crash.Recover("read "+path, &err)
		if p, ok := src.(partialScanner); ok {
			return p.scanPartial(context.Background(), fn)
		}
		problems, err := src.Stream(context.Background(), fn)
		return Summary(problems), err
	}, src.Close, nil
}

// Exchanges reads every exchange of the capture file or Claude Code
// session at path (see Resolve), with what names its trace: a capture's
// started_at metadata, a session's ID. What cannot be opened is an
// *OpenError.
func Exchanges(path string) (exs []exchange.Exchange, started string, err error) {
	defer crash.Recover("read "+path, &err)
	src, err := Open(path)
	if err != nil {
		return nil, "", &OpenError{err}
	}
	defer src.Close()
	ctx := context.Background()
	if _, err := src.Stream(ctx, func(ex *exchange.Exchange) error {
		exs = append(exs, cloned(ex))
		return nil
	}); err != nil {
		return nil, "", err
	}
	if e, ok := src.(exporter); ok {
		started = e.traceSeed(ctx)
	}
	return exs, started, nil
}

// Rows lists the exchanges of the capture file or Claude Code session at
// path (see Resolve) as a capture's rows; damaged says which rows of a
// capture are damaged, in one line ("" for none); close closes what was
// opened. What cannot be opened, and a session that cannot be read, is an
// *OpenError.
func Rows(path string) (rows []store.Summary, damaged func() string, close func() error, err error) {
	defer crash.Recover("read "+path, &err)
	src, err := Open(path)
	if err != nil {
		return nil, nil, nil, &OpenError{err}
	}
	l, ok := src.(lister)
	if !ok {
		src.Close()
		return nil, nil, nil, &OpenError{fmt.Errorf("%s: a %s lists no rows", path, KindOf(path).Name)}
	}
	rows, damaged, err = l.rows(context.Background())
	if err != nil {
		src.Close()
		if _, files := src.(*Files); files {
			return nil, nil, nil, &OpenError{err}
		}
		return nil, nil, nil, err
	}
	return rows, damaged, src.Close, nil
}
