package sharing

// Recent holds the values of the most recently used keys, at most Max
// (Size when 0), most recent first: what is worked out for the arrays a
// Ring offers (a conversation's messages, their hashes) is kept for as
// long as they are likely to be extended. The zero Recent is ready to
// use; it is not safe for concurrent use.
type Recent[K comparable, V any] struct {
	Max     int
	entries []recent[K, V]
}

type recent[K comparable, V any] struct {
	key K
	val V
}

// Get returns the value of key, made by make when it has none (the
// least recently used one then goes when there are Max already); key
// becomes the most recent.
func (r *Recent[K, V]) Get(key K, make func() V) V {
	for i, e := range r.entries {
		if e.key == key {
			copy(r.entries[1:i+1], r.entries[:i])
			r.entries[0] = e
			return e.val
		}
	}
	v := make()
	r.Put(key, v)
	return v
}

// Put makes v the value of key, the most recent; the least recently used
// one goes when there are more than Max.
func (r *Recent[K, V]) Put(key K, v V) {
	r.Delete(key)
	r.entries = append(r.entries, recent[K, V]{})
	copy(r.entries[1:], r.entries)
	r.entries[0] = recent[K, V]{key, v}
	limit := r.Max
	if limit <= 0 {
		limit = Size
	}
	if len(r.entries) > limit {
		clear(r.entries[limit:])
		r.entries = r.entries[:limit]
	}
}

// Delete forgets key.
func (r *Recent[K, V]) Delete(key K) {
	for i, e := range r.entries {
		if e.key == key {
			copy(r.entries[i:], r.entries[i+1:])
			clear(r.entries[len(r.entries)-1:])
			r.entries = r.entries[:len(r.entries)-1]
			return
		}
	}
}

// Values calls fn with each value, most recent first, until fn returns
// false.
func (r *Recent[K, V]) Values(fn func(V) bool) {
	for _, e := range r.entries {
		if !fn(e.val) {
			return
		}
	}
}
