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
