package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/internal/outfile"
	"github.com/tsinspect/tsinspect/redact"
)

// parsePolicy reads the redaction policy name given to flag (--redact,
// --otlp-redact) of command cmd, refused as a bad flag.
func parsePolicy(cmd, flag, name string) (redact.Policy, error) {
	p, err := redact.ParsePolicy(name)
	if err != nil {
		return p, cli.Usage("%s: %s %q: want default, strict or off", cmd, flag, name)
	}
	return p, nil
}

// checkOut refuses, before anything is written, an --out path of cmd
// that tsinspect may not write ("" and "-": standard output).
func checkOut(cmd, out string) error {
	if err := outsideClaudeDir(cmd, "--out", out); err != nil {
		return err
	}
	if out != "" && out != "-" {
		if err := outfile.Check(out); err != nil {
			return fmt.Errorf("%s: %w", cmd, err)
		}
	}
	return nil
}

// writeOut writes through write to standard output (out "" or "-"),
// an error then wrapped in op ("report: write"), or else atomically to
// the file out, an error wrapped in op's command.
func writeOut(env *cli.Env, op, out string, write func(io.Writer) error) error {
	if out == "" || out == "-" {
		if err := write(env.Stdout); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		return nil
	}
	if err := outfile.WriteWith(out, write); err != nil {
		cmd, _, _ := strings.Cut(op, ":")
		return fmt.Errorf("%s: %w", cmd, err)
	}
	return nil
}
