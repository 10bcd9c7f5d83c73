package timeline_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/tsinspect/tsinspect/fixtures/session"
)

// kit is built once in TestMain for the real-client tests; tests only read
// it. kitErr says why it could not be built: the real-client tests fail
// with it, the others still run.
var (
	kit    *session.Kit
	kitErr error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tsinspect-timeline-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kit, kitErr = session.NewKit(dir)
	code := m.Run()
	os.RemoveAll(dir)
	if kit != nil {
		kit.Skips.Tell("timeline", code)
	}
	os.Exit(code)
}

// requireClaude fails t when the kit could not be built, and skips it (or
// fails it, when TSINSPECT_REQUIRE_CLAUDE is set) without Claude Code.
func requireClaude(t *testing.T) {
	t.Helper()
	if kitErr != nil {
		t.Fatalf("building tsinspect and the demo MCP server: %v", kitErr)
	}
	kit.RequireClaude(t)
}
