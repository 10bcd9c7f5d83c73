// Package e2e runs the built tsinspect binary with the real Claude Code CLI
// against the scripted stand-in, and checks what lands in the capture file.
package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tsinspect/tsinspect/fixtures/session"
)

// kit is built once for the package's tests in TestMain; tests only read it.
var kit *session.Kit

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tsinspect-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// No developer's own price file (prices.json in the configuration
	// directory) under the tests' figures.
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	kit, err = session.NewKit(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	kit.Skips.Tell("e2e", code)
	os.Exit(code)
}

// What to install for the tools the tests skip without (.ci/run installs
// them all, under ~/.cache/tsinspect-ci).
const (
	installTmux      = "apt-get install tmux"
	installCurl      = "apt-get install curl"
	installChromium  = "apt-get install chromium fonts-dejavu-core"
	installMitmproxy = "apt-get install mitmproxy"
	installCcusage   = "npm install --prefix ~/.cache/tsinspect-ci/ccusage-" + ccusageVersion + " ccusage@" + ccusageVersion + " @ccusage/ccusage-linux-x64@" + ccusageVersion + " (or TSINSPECT_CCUSAGE=its ccusage)"
	installOtelcol   = "build it with go.opentelemetry.io/collector/cmd/builder@v0.160.0 from .ci/otelcol-builder.yaml as .ci/run does (or TSINSPECT_OTELCOL=its binary)"
	installNewest    = "npm install --prefix ~/.cache/tsinspect-ci/claude-2.1.331 @anthropic-ai/claude-code@2.1.331, then TSINSPECT_CLAUDE_NEWEST=its node_modules/.bin/claude"
	installOld       = "npm install --prefix ~/.cache/tsinspect-ci/claude-2.1.299 @anthropic-ai/claude-code@2.1.299, then TSINSPECT_CLAUDE_OLD=its node_modules/.bin/claude"
)

// skipFor skips tb for want of tool, counted among what the package tells
// at its end (session.Skips).
func skipFor(tb testing.TB, tool, install, msg string) {
	tb.Helper()
	kit.Skips.Skip(tb, tool, install, msg)
}
