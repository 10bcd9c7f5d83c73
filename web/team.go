package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// Team is a team's store the server reads instead of this machine's
// sessions (tsinspect serve --from): the sessions as the listing's
// summaries, each session's project naming its person, and the advice
// facts. Its sessions' turns are not in it: a session's page says so.
type Team interface {
	Summaries(context.Context) ([]*sessionfiles.Summary, error)
	Facts(context.Context) ([]*advice.Facts, error)
}

// refreshTeam reads the listing from the team's store: the items change
// when a session was pushed, grew, or went.
func (l *listing) refreshTeam(ctx context.Context, started time.Time) (uint64, error) {
	sums, err := l.team.Summaries(ctx)
	if err != nil {
		l.problems = []string{err.Error()}
		if l.items == nil {
			return 0, err
		}
		return l.gen, nil // the last reading stays shown
	}
	h := sha256.New()
	for _, s := range sums {
		fmt.Fprintf(h, "%s\x00%s\x00%d\x00%d\x00%d\n", s.Cwd, s.ID, s.End.UnixNano(), s.Turns, len(s.Usage))
	}
	stamp := hex.EncodeToString(h.Sum(nil))
	if stamp == l.stamp {
		return l.gen, nil
	}
	l.known = l.itemsOf(sums)
	var items []*item
	for _, s := range sums {
		if it := l.known[s]; it != nil {
			items = append(items, it)
		}
	}
	l.install(items, stamp, nil)
	l.last = ScanStats{Sessions: len(items), Took: time.Since(started)}
	return l.gen, nil
}
