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
	os.Exit(code)
}
