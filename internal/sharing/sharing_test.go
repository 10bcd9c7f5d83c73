package sharing

import (
	"fmt"
	"slices"
	"testing"
)

func TestShareExtends(t *testing.T) {
	var r Ring[int]
	a := r.Share([]int{1, 2}, Equal[int])
	b := r.Share([]int{1, 2, 3, 4}, Equal[int])
	c := r.Share([]int{1, 2, 3}, Equal[int])
	if !slices.Equal(a, []int{1, 2}) || !slices.Equal(b, []int{1, 2, 3, 4}) || !slices.Equal(c, []int{1, 2, 3}) {
		t.Fatalf("entries changed: %v %v %v", a, b, c)
	}
	if &b[0] != &c[0] {
		t.Errorf("a list that is a prefix of an earlier one does not share its array")
	}
	if cap(a) != len(a) || cap(b) != len(b) || cap(c) != len(c) {
		t.Errorf("capacities %d %d %d, want the lengths", cap(a), cap(b), cap(c))
	}
	// Appending to a handed-out list never writes into another.
	_ = append(a, 99)
	if b[2] != 3 {
		t.Errorf("appending to one list changed another: %v", b)
	}
}

func TestShareDiverges(t *testing.T) {
	var r Ring[int]
	a := r.Share([]int{1, 2, 3}, Equal[int])
	b := r.Share([]int{1, 2, 7, 8}, Equal[int])
	if !slices.Equal(a, []int{1, 2, 3}) || !slices.Equal(b, []int{1, 2, 7, 8}) {
		t.Fatalf("entries changed: %v %v", a, b)
	}
	if &a[0] == &b[0] {
		t.Errorf("diverging lists share an array")
	}
	// Both stay offered: a prefix of either shares its array.
	c := r.Share([]int{1, 2}, Equal[int])
	d := r.Share([]int{1, 2, 7}, Equal[int])
	if &d[0] != &b[0] || (&c[0] != &a[0] && &c[0] != &b[0]) {
		t.Errorf("a prefix did not share with the array it is a prefix of")
	}
}

// TestShareGrowsLinearly checks that a thousand lists, each extending the
// one before, are held in few arrays: what they cost grows with the last
// list's length, not with the sum of their lengths.
func TestShareGrowsLinearly(t *testing.T) {
	var r Ring[int]
	arrays := map[*int]bool{}
	var all []int
	for i := 0; i < 1000; i++ {
		all = append(all, i)
		got := r.Share(slices.Clone(all), Equal[int])
		if !slices.Equal(got, all) {
			t.Fatalf("list %d changed", i)
		}
		arrays[&got[0]] = true
	}
	if len(arrays) > 20 {
		t.Errorf("a thousand extending lists are held in %d arrays, want at most 20", len(arrays))
	}
}

func TestShareKeepsFewArrays(t *testing.T) {
	var r Ring[int]
	first := r.Share([]int{0}, Equal[int])
	for i := 1; i <= Size; i++ {
		r.Share([]int{i}, Equal[int])
	}
	if again := r.Share([]int{0, 1}, Equal[int]); &again[0] == &first[0] {
		t.Errorf("an array older than %d others is still offered", Size)
	}
	if len(r.arrays) > Size {
		t.Errorf("%d arrays kept, want at most %d", len(r.arrays), Size)
	}
}

// TestExtend: a list extended from one handed out shares its array, as
// far as the array goes on with the same entries; one that goes on
// otherwise gets its own, and every list keeps its entries.
func TestExtend(t *testing.T) {
	var r Ring[int]
	a := r.Share([]int{1, 2}, Equal[int])
	b := r.Extend(a, []int{3, 4}, Equal[int])
	if !slices.Equal(b, []int{1, 2, 3, 4}) {
		t.Fatalf("extended: %v", b)
	}
	c := r.Extend(a, []int{3}, Equal[int]) // within what the array holds
	if !slices.Equal(c, []int{1, 2, 3}) || &c[0] != &b[0] {
		t.Errorf("a list the array holds already: %v, shared %v", c, &c[0] == &b[0])
	}
	d := r.Extend(a, []int{9}, Equal[int]) // goes on otherwise
	if !slices.Equal(d, []int{1, 2, 9}) || &d[0] == &b[0] {
		t.Errorf("a diverging list: %v, shared %v", d, &d[0] == &b[0])
	}
	if !slices.Equal(a, []int{1, 2}) || !slices.Equal(b, []int{1, 2, 3, 4}) || !slices.Equal(c, []int{1, 2, 3}) {
		t.Errorf("entries changed: %v %v %v", a, b, c)
	}
	if e := r.Extend(nil, []int{5}, Equal[int]); !slices.Equal(e, []int{5}) || cap(e) != len(e) {
		t.Errorf("from nothing: %v cap %d", e, cap(e))
	}
}

// TestRecent: values made once per key, the least recently used going
// first past Max.
func TestRecent(t *testing.T) {
	r := Recent[int, string]{Max: 2}
	made := 0
	get := func(k int) string {
		return r.Get(k, func() string { made++; return fmt.Sprint("v", k) })
	}
	get(1)
	get(2)
	if get(1) != "v1" || made != 2 {
		t.Fatalf("made %d", made)
	}
	get(3) // 2 goes: 1 was used since
	var order []string
	r.Values(func(v string) bool { order = append(order, v); return true })
	if !slices.Equal(order, []string{"v3", "v1"}) {
		t.Errorf("kept %v, want [v3 v1]", order)
	}
	r.Delete(1)
	r.Put(4, "w")
	order = nil
	r.Values(func(v string) bool { order = append(order, v); return true })
	if !slices.Equal(order, []string{"w", "v3"}) || get(2) != "v2" || made != 4 {
		t.Errorf("kept %v, made %d", order, made)
	}
}
