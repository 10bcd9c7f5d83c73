package main

import (
	"fmt"
	"os"
	"testing"
)

// TestMain keeps the tests from the developer's own price file: without
// --prices every command reads prices.json in the user's configuration
// directory, which here is an empty temporary one.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tsinspect-config-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
