package timeline

import (
	"slices"
	"sort"

	"github.com/tsinspect/tsinspect/decode"
)

// diffs sets each turn's catalog and working-set changes against Prev.
// memo, when not nil, keeps them between builds.
func diffs(infos []*info, memo *analysed) {
	for _, in := range infos {
		t := in.t
		if t.Prev == 0 {
			continue
		}
		p := infos[t.Prev-1].d
		key := [2]*decode.Turn{p, in.d}
		if d, ok := memo.diff(key); ok {
			t.CatalogAdded, t.CatalogRemoved, t.WorkingAdded, t.WorkingRemoved = d[0], d[1], d[2], d[3]
			continue
		}
		t.CatalogAdded, t.CatalogRemoved = SetDiff(p.Catalog, in.d.Catalog)
		t.WorkingAdded, t.WorkingRemoved = SetDiff(workingNames(p), workingNames(in.d))
		memo.keepDiff(key, [4][]string{t.CatalogAdded, t.CatalogRemoved, t.WorkingAdded, t.WorkingRemoved})
	}
}

func workingNames(d *decode.Turn) []string {
	out := make([]string, 0, len(d.WorkingSet))
	for _, w := range d.WorkingSet {
		out = append(out, w.Name)
	}
	return out
}

// setDiff returns the sorted names in b but not a, and in a but not b.
func SetDiff(a, b []string) (added, removed []string) {
	if slices.Equal(a, b) {
		return nil, nil // most turns send the last turn's names again
	}
	in := func(list []string) map[string]bool {
		m := make(map[string]bool, len(list))
		for _, s := range list {
			m[s] = true
		}
		return m
	}
	am, bm := in(a), in(b)
	for s := range bm {
		if !am[s] {
			added = append(added, s)
		}
	}
	for s := range am {
		if !bm[s] {
			removed = append(removed, s)
		}
	}
	sort.Strings(added)
	sort.Strings(removed)
	return added, removed
}
