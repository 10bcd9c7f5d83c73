package team

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/redact"
)

// publicDir holds real Claude Code sessions of many releases.
const publicDir = "../source/testdata/public"

// copySessions copies the public sessions named (directories of
// publicDir; none: all) into a projects directory of a temporary
// directory, each under a project named as Claude Code names
// /home/PERSON/work/NAME.
func copySessions(t *testing.T, person string, names ...string) string {
	t.Helper()
	if len(names) == 0 {
		ents, err := os.ReadDir(publicDir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.IsDir() {
				names = append(names, e.Name())
			}
		}
	}
	root := t.TempDir()
	for _, n := range names {
		dst := filepath.Join(root, "-home-"+person+"-work-"+strings.ReplaceAll(n, ".", "-"))
		if err := os.CopyFS(dst, os.DirFS(filepath.Join(publicDir, n))); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// push pushes root as person on machine to url, failing t on an error.
func push(t *testing.T, url, person, machine, root string) PushStats {
	t.Helper()
	var log bytes.Buffer
	st, err := Push(context.Background(), PushOptions{URL: url, Person: person, Machine: machine, Roots: []string{root},
		Prices: pricing.Default(), Policy: redact.Default, Log: &log})
	if err != nil {
		t.Fatalf("push: %v\n%s", err, log.String())
	}
	return st
}
