package source_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/source"
)

// Issue 42, item 13: reading a capture kept inside Claude Code's directory
// created its -wal and -shm files there, against the promise that nothing
// is ever written there. It is now opened immutable: read whole, and the
// directory holds after the read exactly what it held before.
func TestCaptureInClaudeDirIsReadWithoutWriting(t *testing.T) {
	config := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", config)
	demo, err := os.ReadFile(filepath.Join("..", "fixtures", "democapture", "demo.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(config, "demo.db")
	if err := os.WriteFile(path, demo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, open := range []func() error{
		func() error {
			c, err := source.OpenCapture(path)
			if err != nil {
				return err
			}
			defer c.Close()
			n := 0
			if _, err := c.Stream(context.Background(), func(*exchange.Exchange) error { n++; return nil }); err != nil {
				return err
			}
			if n == 0 {
				t.Error("no exchange read")
			}
			return nil
		},
		func() error {
			b, _, err := source.ReadFile(context.Background(), path)
			if err == nil && len(b.Session().Turns) == 0 {
				t.Error("no turn read")
			}
			return err
		},
	} {
		if err := open(); err != nil {
			t.Fatal(err)
		}
		names, _ := os.ReadDir(config)
		if len(names) != 1 {
			var got []string
			for _, n := range names {
				got = append(got, n.Name())
			}
			t.Errorf("Claude Code's directory holds %q after the read, want only demo.db", got)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, demo) {
			t.Error("the capture changed")
		}
	}
}
