package web

import (
	"context"
	"time"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// Team is a team's store the server reads instead of this machine's
// sessions (tsinspect serve --from): the sessions as the listing's
// summaries, each session's project naming its person, and the advice
// facts. Its sessions' turns are not in it: a session's page says so.
type Team interface {
	// Stamp changes whenever what Summaries gives does (a push): the
	// summaries are read again only then.
	Stamp(context.Context) (string, error)
	Summaries(context.Context) ([]*sessionfiles.Summary, error)
	Facts(context.Context) ([]*advice.Facts, error)
}

// refreshTeam reads the listing from the team's store: the items change
// when a session was pushed, grew, or went.
func (l *listing) refreshTeam(ctx context.Context, started time.Time) (uint64, error) {
	stamp, err := l.team.Stamp(ctx)
	if err == nil && stamp == l.stamp {
		return l.gen, nil
	}
	var sums []*sessionfiles.Summary
	if err == nil {
		sums, err = l.team.Summaries(ctx)
	}
	if err != nil {
		l.problems = []string{err.Error()}
		if l.items == nil {
			return 0, err
		}
		return l.gen, nil // the last reading stays shown
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
