package exchange

import "testing"

func TestClientVersion(t *testing.T) {
	for ua, want := range map[string]string{
		"claude-cli/2.1.328 (external, cli)": "2.1.328",
		"claude-cli/2.0.1":                   "2.0.1",
		"curl/8.5.0":                         "",
		"":                                   "",
	} {
		ex := &Exchange{ReqHeaders: []Header{{Name: "user-agent", Value: ua}}}
		if got := ex.ClientVersion(); got != want {
			t.Errorf("ClientVersion(%q) = %q, want %q", ua, got, want)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"2.1.328", "2.1.331", -1}, {"2.1.331", "2.1.328", 1}, {"2.1.100", "2.1.99", 1},
		{"2.1", "2.1.0", 0}, {"2.1.328-beta", "2.1.328", 0}, {"", "0", 0},
	} {
		if got := CompareVersions(c.a, c.b); got != c.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
