package numfmt

import "testing"

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 21480: "21,480", 1234567: "1,234,567", -4946: "−4,946", -12: "−12"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 91700: "91.7 kB", 1200000: "1.2 MB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 turns"}, {1, "1 turn"}, {2, "2 turns"}, {1200, "1,200 turns"}} {
		if got := Count(c.n, "turn", "turns"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if Plural(1, "entry", "entries") != "entry" || Plural(3, "entry", "entries") != "entries" {
		t.Error("Plural")
	}
}
