package compare

import "crypto/sha256"

// pair is one step of an alignment: a[i] with b[j], or one of them alone
// (the other -1).
type pair struct{ i, j int }

// maxCells bounds the table of one longest-common-subsequence step; a
// longer stretch that differs throughout is paired in order instead.
const maxCells = 16 << 20

// align pairs the turns of two threads: first those equal in content
// (sig), in the longest common subsequence; in each stretch between them,
// those equal in model and calls (weak); what is left of a stretch is
// paired in order, the longer side's extra turns inserted or deleted.
func align(a, b []*facts) []pair {
	var out []pair
	for _, p := range lcsAlign(a, b, 0, len(a), 0, len(b), false) {
		out = append(out, p...)
	}
	return out
}

// lcsAlign aligns a[i0:i1] with b[j0:j1] by key and returns runs of
// pairs; the stretches between matches are aligned by the weak key, then
// in order.
func lcsAlign(a, b []*facts, i0, i1, j0, j1 int, weak bool) [][]pair {
	key := func(f *facts) [sha256.Size]byte {
		if weak {
			return f.weak
		}
		return f.sig
	}
	var runs [][]pair
	gap := func(gi0, gi1, gj0, gj1 int) {
		if gi0 == gi1 && gj0 == gj1 {
			return
		}
		if !weak && gi0 < gi1 && gj0 < gj1 {
			runs = append(runs, lcsAlign(a, b, gi0, gi1, gj0, gj1, true)...)
			return
		}
		runs = append(runs, inOrder(gi0, gi1, gj0, gj1))
	}
	// Common prefix and suffix first: two runs of one scenario align in
	// linear time.
	var head, tail []pair
	for i0 < i1 && j0 < j1 && key(a[i0]) == key(b[j0]) {
		head = append(head, pair{i0, j0})
		i0, j0 = i0+1, j0+1
	}
	for i0 < i1 && j0 < j1 && key(a[i1-1]) == key(b[j1-1]) {
		i1, j1 = i1-1, j1-1
		tail = append(tail, pair{i1, j1})
	}
	runs = append(runs, head)
	n, m := i1-i0, j1-j0
	switch {
	case n == 0 || m == 0:
		gap(i0, i1, j0, j1)
	case n*m > maxCells:
		runs = append(runs, inOrder(i0, i1, j0, j1))
	default:
		// L[i][j] is the LCS length of a[i0+i:i1] and b[j0+j:j1].
		w := m + 1
		L := make([]int32, (n+1)*w)
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if key(a[i0+i]) == key(b[j0+j]) {
					L[i*w+j] = L[(i+1)*w+j+1] + 1
				} else {
					L[i*w+j] = max(L[(i+1)*w+j], L[i*w+j+1])
				}
			}
		}
		i, j := 0, 0
		gi, gj := 0, 0
		for i < n && j < m {
			switch {
			case key(a[i0+i]) == key(b[j0+j]):
				gap(i0+gi, i0+i, j0+gj, j0+j)
				runs = append(runs, []pair{{i0 + i, j0 + j}})
				i, j = i+1, j+1
				gi, gj = i, j
			case L[(i+1)*w+j] >= L[i*w+j+1]:
				i++
			default:
				j++
			}
		}
		gap(i0+gi, i1, j0+gj, j1)
	}
	for k := len(tail) - 1; k >= 0; k-- {
		runs = append(runs, []pair{tail[k]})
	}
	return runs
}

// inOrder pairs a[i0:i1] with b[j0:j1] in order; the longer side's extra
// turns come last, alone.
func inOrder(i0, i1, j0, j1 int) []pair {
	var out []pair
	for i0 < i1 && j0 < j1 {
		out = append(out, pair{i0, j0})
		i0, j0 = i0+1, j0+1
	}
	for ; i0 < i1; i0++ {
		out = append(out, pair{i0, -1})
	}
	for ; j0 < j1; j0++ {
		out = append(out, pair{-1, j0})
	}
	return out
}
