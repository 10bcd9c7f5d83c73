package e2e

import (
	"os"
	"testing"

	"github.com/tsinspect/tsinspect/fixtures/session"
)

// eachRelease runs fn as a subtest with the pinned Claude Code and with
// the one $TSINSPECT_CLAUDE_NEWEST names: that one is skipped without it
// (saying what it would have done: what), a failure under
// TSINSPECT_REQUIRE_CLAUDE_NEWEST=1.
func eachRelease(t *testing.T, what string, fn func(t *testing.T, k *session.Kit)) {
	t.Helper()
	kit.RequireClaude(t)
	releases := map[string]*session.Kit{"pinned": kit}
	if p := os.Getenv("TSINSPECT_CLAUDE_NEWEST"); p != "" {
		k := *kit
		k.Claude = p
		releases["newest"] = &k
	}
	for _, name := range []string{"pinned", "newest"} {
		k := releases[name]
		t.Run(name, func(t *testing.T) {
			if k == nil {
				if os.Getenv("TSINSPECT_REQUIRE_CLAUDE_NEWEST") == "1" {
					t.Fatal("TSINSPECT_CLAUDE_NEWEST is not set: install the newest @anthropic-ai/claude-code and point it at its claude")
				}
				skipFor(t, "the newest Claude Code", installNewest, "set TSINSPECT_CLAUDE_NEWEST to the newest Claude Code's claude to "+what)
			}
			fn(t, k)
		})
	}
}
