package recording

import (
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/capture"
)

// The exports record prints for another shell.

func TestExportLine(t *testing.T) {
	for kv, want := range map[string]string{
		"ENABLE_TOOL_SEARCH=true":      `ENABLE_TOOL_SEARCH="${ENABLE_TOOL_SEARCH:-true}"`,
		"HTTPS_PROXY=http://1.2.3.4:5": "HTTPS_PROXY=http://1.2.3.4:5",
		"NODE_EXTRA_CA_CERTS=/a b.pem": "NODE_EXTRA_CA_CERTS='/a b.pem'",
	} {
		if got := ExportLine(kv); got != want {
			t.Errorf("ExportLine(%q) = %s, want %s", kv, got, want)
		}
	}
}

func TestExportsFor(t *testing.T) {
	rev := []string{"ANTHROPIC_BASE_URL=http://127.0.0.1:1"}
	if got := strings.Join(ExportsFor(capture.ModeReverse, rev), " "); got != "ANTHROPIC_BASE_URL=http://127.0.0.1:1 ENABLE_TOOL_SEARCH=true" {
		t.Errorf("reverse, kept value here: %s", got)
	}
	both := []string{"ANTHROPIC_BASE_URL=x", "ENABLE_TOOL_SEARCH=true"}
	if got := ExportsFor(capture.ModeReverse, both); len(got) != 2 {
		t.Errorf("reverse, set here: %q", got)
	}
	mitm := []string{"HTTPS_PROXY=x"}
	if got := ExportsFor(capture.ModeMITM, mitm); len(got) != 1 {
		t.Errorf("mitm: %q", got)
	}
}
