package main

import (
	"errors"
	"fmt"

	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/textout"
)

func runExchanges(env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "exchanges", "FILE [--json]", `
List every exchange recorded in a capture file: time, method, path, status,
response bytes, duration and state (complete, client_aborted,
upstream_failed, in_flight). Works on a capture that is still being written.

With --json, one JSON object per line (JSON Lines) instead: id, start,
first_byte, end (RFC 3339, null when unknown), method, url, path, status,
request_bytes, response_bytes, duration_ms, state, error. Fields are
never renamed or removed; new ones may appear.`)
	asJSON := fs.Bool("json", false, "write JSON Lines, one object per exchange")
	pos, err := cli.Args(fs, args, 1, 1, "one capture FILE")
	if err != nil {
		return err
	}
	path, err := source.Resolve(pos[0], env.Stderr)
	if err != nil {
		return readError("exchanges", pos[0], err)
	}
	rows, damaged, closeRows, err := source.Rows(path)
	var oe *source.OpenError
	if errors.As(err, &oe) {
		return readError("exchanges", pos[0], oe.Err)
	}
	if err != nil {
		return err
	}
	defer closeRows()
	if *asJSON {
		if err := textout.ExchangesJSON(env.Stdout, rows); err != nil {
			return fmt.Errorf("exchanges: %w", err)
		}
		return nil
	}
	if err := textout.Exchanges(env.Stdout, rows); err != nil {
		return fmt.Errorf("exchanges: write: %w", err)
	}
	if d := damaged(); d != "" {
		fmt.Fprintf(env.Stderr, "tsinspect: warning: %s: %s\n", pos[0], d)
	}
	if len(rows) == 0 {
		fmt.Fprintln(env.Stderr, "tsinspect: no exchanges recorded in", pos[0])
	}
	for _, l := range textout.ExchangesLimits(rows) {
		fmt.Fprintln(env.Stderr, "tsinspect: "+l)
	}
	return nil
}
