package main

import (
	"context"
	"fmt"
	"os"

	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/store"
)

func runCompact(env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "compact", "FILE", `
Compress, in place, the bodies of a capture written by an older tsinspect,
which stored every request whole: each request is compressed against the
previous one of its conversation, as 'record' now does while recording.
The bodies read back byte for byte as before. Progress goes to standard
error; at the end the file is rewritten to give the space back.

Older captures open without this (turns, report, open... read them as
they are); compacting only makes them smaller and faster to read.`)
	pos, err := cli.Args(fs, args, 1, 1, "one capture FILE")
	if err != nil {
		return err
	}
	path := pos[0]
	if err := notASessionFile("compact", path); err != nil {
		return err
	}
	if err := outsideClaudeDir("compact", "FILE", path); err != nil {
		return err
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	before := store.FileBytes(path)
	db, err := store.OpenWriter(path, false)
	if err != nil {
		return store.TargetError("compact", path, err)
	}
	err = db.Compact(context.Background(), store.CompactLines(env.Stderr))
	if cerr := db.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	fmt.Fprintf(env.Stdout, "%s: %s, was %s\n", path, numfmt.Bytes(store.FileBytes(path)), numfmt.Bytes(before))
	return nil
}
