// Package source is where a session's exchanges come from, and the one way
// to read them into a timeline or to follow them as they are written. A
// capture file (package store) is one kind of source; another kind plugs
// in by implementing [Source]. The command and the terminal UI both load
// and follow through here.
package source

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/crash"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/store"
	"github.com/tsinspect/tsinspect/timeline"
)

// Source is a stream of exchanges from somewhere.
type Source interface {
	// Name is what messages call the source (a file's path).
	Name() string
	// Stream hands every exchange to fn, in order. The exchange and its
	// bodies are fn's only until it returns. What cannot be read is
	// skipped, and returned.
	Stream(ctx context.Context, fn func(*exchange.Exchange) error) ([]Problem, error)
	// Get returns one exchange whole, bodies included, by its ID.
	Get(ctx context.Context, id int64) (*exchange.Exchange, error)
	// Close releases the source.
	Close() error
}

// Problem is a part of a source that could not be read: the exchange it
// held (ID, 0 when unknown) and what was wrong.
type Problem = store.Damage

// Summary says in one line which parts were skipped, "" for none: the
// damaged rows of a capture by ID, and what else could not be read (parts
// of session files, ID 0) as it is.
func Summary(ps []Problem) string {
	var rows []Problem
	var other []string
	for _, p := range ps {
		if p.ID == 0 {
			other = append(other, p.Problem)
		} else {
			rows = append(rows, p)
		}
	}
	if len(rows) > 0 {
		other = append([]string{store.DamageSummary(rows)}, other...)
	}
	if len(other) > 3 {
		other = append(other[:3], fmt.Sprintf("and %d more", len(other)-3))
	}
	return strings.Join(other, "; ")
}

// Capture is a capture file opened for reading.
type Capture struct{ db *store.DB }

// OpenCapture opens the capture file at path for reading; a missing file
// or one that is not a capture is an error (see store.ErrNotCapture).
func OpenCapture(path string) (*Capture, error) {
	db, err := OpenCaptureDB(path)
	if err != nil {
		return nil, err
	}
	return &Capture{db: db}, nil
}

// OpenCaptureDB opens the capture file at path for reading: read-only, and
// immutable when it is inside Claude Code's directory (store.OpenImmutable),
// where tsinspect never writes, not even SQLite's -wal and -shm files.
func OpenCaptureDB(path string) (*store.DB, error) {
	if _, in := sessionfiles.Inside(path, os.Getenv); in {
		return store.OpenImmutable(path)
	}
	return store.OpenReadOnly(path)
}

// Name is the file's path.
func (c *Capture) Name() string { return c.db.Path() }

// Stream hands every exchange of the capture to fn, skipping the rows that
// cannot be read.
func (c *Capture) Stream(ctx context.Context, fn func(*exchange.Exchange) error) ([]Problem, error) {
	return c.db.Scan(ctx, store.ScanOptions{Salvage: true, Stream: true}, fn)
}

// Get reads one exchange whole.
func (c *Capture) Get(ctx context.Context, id int64) (*exchange.Exchange, error) {
	ex, err := c.db.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return &ex, nil
}

// Close closes the file.
func (c *Capture) Close() error { return c.db.Close() }

// Len is about how many exchanges the file holds (the highest ID), for a
// reading's progress.
func (c *Capture) Len(ctx context.Context) (int64, error) { return c.db.LastID(ctx) }

// Read streams src into a new timeline.Builder that drops the bodies of
// Messages exchanges once decoded (memory follows what the session holds,
// not the sum of its requests, each of which repeats the history) and
// reads them back from src when a turn's are asked for, as long as src is
// open. It returns the parts skipped.
func Read(ctx context.Context, src Source) (*timeline.Builder, []Problem, error) {
	return ReadSeen(ctx, src, nil)
}

// ReadSeen is Read, calling seen (when not nil) with the Builder after
// each exchange is added, in the reading goroutine: a front end can show
// the turns read so far (b.Session()) while the rest is read.
func ReadSeen(ctx context.Context, src Source, seen func(b *timeline.Builder)) (*timeline.Builder, []Problem, error) {
	b := timeline.NewBuilder(false)
	b.SetLoader(func(id int64) (*exchange.Exchange, error) { return src.Get(ctx, id) })
	return into(ctx, src, b, seen)
}

// ReadFile opens the capture or session at path (see Open), reads it as
// Read does and closes it: the turns then hold no way back to their
// bodies.
func ReadFile(ctx context.Context, path string) (*timeline.Builder, []Problem, error) {
	c, err := Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	return into(ctx, c, timeline.NewBuilder(false), nil)
}

// ReadFileSchemas is ReadFile, also returning, for a Claude Code session,
// the sizes of its deferred tools' definitions that its files keep apart
// from its requests, as its reading found them (sessionfiles'
// DeferredSchemas, without reading the files again); nil for a capture.
func ReadFileSchemas(ctx context.Context, path string) (*timeline.Builder, []Problem, map[string]int, error) {
	c, err := Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer c.Close()
	var schemas map[string]int
	if f, ok := c.(*Files); ok {
		schemas = f.s.DeferredSchemas()
	}
	b, problems, err := into(ctx, c, timeline.NewBuilder(false), nil)
	return b, problems, schemas, err
}

// MadeStreamer is a Source that can hand the requests it made as the
// parts they are made of (exchange.Exchange.ReqMade, with no body): the
// reading of a Builder that keeps what it decodes of each message rather
// than the bodies. A Source that wraps another (to count what it hands
// on) passes it on.
type MadeStreamer interface {
	StreamMade(ctx context.Context, fn func(*exchange.Exchange) error) ([]Problem, error)
}

// into streams src into b.
func into(ctx context.Context, src Source, b *timeline.Builder, seen func(*timeline.Builder)) (_ *timeline.Builder, problems []Problem, err error) {
	// A bug that a capture or session trips is one error line, not a
	// crash (and not one that leaves a terminal in raw mode).
	defer crash.Recover("read "+src.Name(), &err)
	stream := src.Stream
	if m, ok := src.(MadeStreamer); ok && !b.KeepsBodies() {
		stream = m.StreamMade
	}
	problems, err = stream(ctx, func(ex *exchange.Exchange) error {
		b.Add(ex)
		if seen != nil {
			seen(b)
		}
		return nil
	})
	if err != nil {
		return nil, problems, err
	}
	return b, problems, nil
}
