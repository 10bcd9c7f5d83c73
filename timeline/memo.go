package timeline

import "github.com/tsinspect/tsinspect/decode"

// analysed keeps what analyse works out about each turn, by its place in
// the exchanges, for a Builder that builds again as exchanges come: that
// depends on the turn alone, so only new and changed turns are analysed.
// The hasher goes on too, so that messages shared with earlier turns are
// not hashed again.
type analysed struct {
	h     *hasher
	infos []*info // as analyse left them, without their Turn; nil: not yet
	diffs map[[2]*decode.Turn][4][]string
	runs  int // turns analysed so far (tests)
	// linked is how the first turns were linked, kept between builds.
	linked *linked
}

// forget drops what was worked out about the exchange at index i.
func (a *analysed) forget(i int) {
	if i < len(a.infos) {
		a.infos[i] = nil
	}
}

// diff returns the catalog and working-set changes worked out earlier
// between two decoded turns: catalog added, removed, working set added,
// removed. A nil memo has none.
func (a *analysed) diff(key [2]*decode.Turn) ([4][]string, bool) {
	if a == nil {
		return [4][]string{}, false
	}
	d, ok := a.diffs[key]
	return d, ok
}

// keepDiff keeps the changes between two decoded turns; they depend on
// those alone.
func (a *analysed) keepDiff(key [2]*decode.Turn, d [4][]string) {
	if a == nil {
		return
	}
	if a.diffs == nil {
		a.diffs = map[[2]*decode.Turn][4][]string{}
	}
	a.diffs[key] = d
}

// linked is how a Builder's first n turns were linked, and the indexes
// they make, kept from one build to the next.
type linked struct {
	n      int
	src    []*info // the analysis each was linked with
	class  []linkClass
	parent []int // 0-based; -1: starts a thread
	how    []string
	thread []int // index in threads
	// threads counts the threads the kept turns started.
	threads int

	byFull, byLast map[digest][]int
	firstWith      map[digest]int
	byFP           map[string][]int
	seen           map[string]int
	held           map[string][]heldAt

	// pending: a turn was linked but not kept; its index entries are in
	// undo.
	pending bool
	undo    []undo
}

// linkClass is what classify and resolveClients decided of a turn; a
// kept turn whose decision changed is linked again.
type linkClass struct {
	client                 Client
	side, compaction, cont bool
}

func classOf(in *info) linkClass {
	return linkClass{in.client, in.side, in.compaction, in.continued}
}

// undo takes one index entry out again: the last turn of m[key] or of
// byFP[fp], firstWith[key] (first), or seen[seen] back to prev.
type undo struct {
	m     map[digest][]int
	key   digest
	first bool
	held  string
	fp    string
	seen  string
	prev  int
	had   bool
}

// reuse returns l if the turns it kept are still the first of infos, each
// with the same analysis and class; else a new, empty one.
func (l *linked) reuse(infos []*info) *linked {
	if l != nil && l.n <= len(infos) {
		ok := true
		for k := range l.n {
			if infos[k].src != l.src[k] || classOf(infos[k]) != l.class[k] {
				ok = false
				break
			}
		}
		if ok {
			return l
		}
	}
	return &linked{byFull: map[digest][]int{}, firstWith: map[digest]int{}, byLast: map[digest][]int{}, byFP: map[string][]int{}, seen: map[string]int{}, held: map[string][]heldAt{}}
}

// keep adds the next turn as linked.
func (l *linked) keep(in *info, parent int, how string, thread int, started bool) {
	l.n++
	l.src = append(l.src, in.src)
	l.class = append(l.class, classOf(in))
	l.parent = append(l.parent, parent)
	l.how = append(l.how, how)
	l.thread = append(l.thread, thread)
	if started {
		l.threads++
	}
}

// rollback takes out what the turns not kept added to the indexes.
func (l *linked) rollback() {
	for i := len(l.undo) - 1; i >= 0; i-- {
		u := l.undo[i]
		switch {
		case u.first:
			delete(l.firstWith, u.key)
		case u.held != "":
			if s := l.held[u.held]; len(s) > 1 {
				l.held[u.held] = s[:len(s)-1]
			} else {
				delete(l.held, u.held)
			}
		case u.m != nil:
			if s := u.m[u.key]; len(s) > 1 {
				u.m[u.key] = s[:len(s)-1]
			} else {
				delete(u.m, u.key)
			}
		case u.seen != "":
			if u.had {
				l.seen[u.seen] = u.prev
			} else {
				delete(l.seen, u.seen)
			}
		default:
			if s := l.byFP[u.fp]; len(s) > 1 {
				l.byFP[u.fp] = s[:len(s)-1]
			} else {
				delete(l.byFP, u.fp)
			}
		}
	}
	l.undo, l.pending = nil, false
}
