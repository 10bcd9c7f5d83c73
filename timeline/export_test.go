package timeline

// BuilderWork says how many exchanges b has decoded and how many turns it
// has analysed since it was made.
func BuilderWork(b *Builder) (decoded, analysed int) { return b.decodes, b.memo.runs }

// BuilderLinked says how many turns b keeps linked between builds, and
// how many entries of the indexes it keeps name a later turn (left over
// from a build that linked turns it did not keep).
func BuilderLinked(b *Builder) (kept, stray int) {
	l := b.memo.linked
	if l == nil {
		return 0, 0
	}
	for _, k := range l.firstWith {
		if k >= l.n {
			stray++
		}
	}
	for _, m := range []map[digest][]int{l.byFull, l.byLast} {
		for _, ks := range m {
			for _, k := range ks {
				if k >= l.n {
					stray++
				}
			}
		}
	}
	for _, ks := range l.byFP {
		for _, k := range ks {
			if k >= l.n {
				stray++
			}
		}
	}
	for _, hs := range l.held {
		for _, h := range hs {
			if h.first >= l.n {
				stray++
			}
		}
	}
	for _, k := range l.seen {
		if k >= l.n {
			stray++
		}
	}
	return l.n, stray
}
