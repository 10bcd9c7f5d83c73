package source

import (
	"context"
	"fmt"
	"io"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/store"
	"github.com/tsinspect/tsinspect/timeline"
)

// Load reads a capture file an exchange at a time into a timeline.Builder
// that drops the bodies of Messages exchanges once decoded (ReadFile):
// memory follows what the session holds, not the sum of its requests,
// each of which repeats the history. Rows that cannot be read are left out
// and named in one line on warn (nil: not named): one bad row does not
// cost the rest.
func Load(path string, warn io.Writer) (*timeline.Builder, error) {
	resolved, err := Resolve(path, warn)
	if err != nil {
		return nil, err
	}
	b, problems, err := ReadFile(context.Background(), resolved)
	if len(problems) > 0 && warn != nil {
		fmt.Fprintf(warn, "tsinspect: warning: %s: %s\n", path, Summary(problems))
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

// LoadSession is Load's timeline: the session of a capture file, without
// the bodies of its Messages exchanges.
func LoadSession(path string, warn io.Writer) (*timeline.Session, error) {
	b, err := Load(path, warn)
	if err != nil {
		return nil, err
	}
	return b.Session(), nil
}

// Salvage reads every exchange of an open capture, bodies included,
// leaving out the rows that cannot be read and naming them in one line on
// warn (nil: not named).
func Salvage(db *store.DB, warn io.Writer) ([]exchange.Exchange, error) {
	var exs []exchange.Exchange
	damage, err := db.Scan(context.Background(), store.ScanOptions{Salvage: true}, func(ex *exchange.Exchange) error {
		exs = append(exs, *ex)
		return nil
	})
	if len(damage) > 0 && warn != nil {
		fmt.Fprintf(warn, "tsinspect: warning: %s: %s\n", db.Path(), store.DamageSummary(damage))
	}
	if err != nil {
		return nil, err
	}
	return exs, nil
}
