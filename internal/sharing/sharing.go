// Package sharing lets successive lists that extend one another share one
// array. A conversation's requests each repeat the previous one's history,
// so each turn's list of messages, searches or hashes begins with the
// previous turn's list; held whole by every turn, those lists cost memory
// that grows with the square of the session's length. Shared, a new turn
// costs its new entries only.
package sharing

// Ring offers the most recent arrays for sharing. Several conversations
// (a main agent, subagents, side queries) interleave, so it keeps a few.
// The zero Ring is ready to use; it is not safe for concurrent use.
type Ring[T any] struct {
	arrays []*array[T]
}

// Size is how many recent arrays a Ring keeps.
const Size = 8

// array holds entries; every list handed out is a prefix of it capped to
// its length, so that appending to one never writes into another.
type array[T any] struct {
	items []T
}

// Share returns list, or the same entries as a prefix of an array shared
// with earlier lists when one of the recent arrays begins with list or is
// a prefix of it. same reports whether two entries are the same. The
// result's capacity is its length: the caller must not change its entries.
func (r *Ring[T]) Share(list []T, same func(a, b *T) bool) []T {
	if len(list) == 0 {
		return list
	}
	for i, s := range r.arrays {
		n := min(len(s.items), len(list))
		k := 0
		for k < n && same(&s.items[k], &list[k]) {
			k++
		}
		if k < n {
			continue
		}
		if len(list) > len(s.items) {
			s.items = append(s.items, list[len(s.items):]...)
		}
		copy(r.arrays[1:i+1], r.arrays[:i]) // most recently used first
		r.arrays[0] = s
		return s.items[:len(list):len(list)]
	}
	r.arrays = append(r.arrays, nil)
	copy(r.arrays[1:], r.arrays)
	r.arrays[0] = &array[T]{items: list}
	if len(r.arrays) > Size {
		r.arrays = r.arrays[:Size]
	}
	return list[:len(list):len(list)]
}

// Equal is a same function for comparable entries.
func Equal[T comparable](a, b *T) bool { return *a == *b }

// Extend is Share(prefix followed by more) for a prefix Share or Extend
// handed out: when the array prefix is a part of is still offered and
// goes on with more, or ends with prefix, the list is that array's (more
// appended to it), found without comparing prefix's entries again.
func (r *Ring[T]) Extend(prefix, more []T, same func(a, b *T) bool) []T {
	n := len(prefix)
	if n > 0 {
		for i, s := range r.arrays {
			if len(s.items) < n || &s.items[0] != &prefix[0] {
				continue
			}
			k := 0
			for k < len(more) && n+k < len(s.items) && same(&s.items[n+k], &more[k]) {
				k++
			}
			if k < len(more) && n+k < len(s.items) {
				break // it goes on otherwise
			}
			if k < len(more) {
				s.items = append(s.items, more[k:]...)
			}
			copy(r.arrays[1:i+1], r.arrays[:i]) // most recently used first
			r.arrays[0] = s
			m := n + len(more)
			return s.items[:m:m]
		}
	}
	list := make([]T, 0, n+len(more))
	return r.Share(append(append(list, prefix...), more...), same)
}
