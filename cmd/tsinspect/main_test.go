package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/internal/cli"
)

// runIn runs a command line in process and returns its status and output.
func runIn(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(&cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, args)
	return code, out.String(), errb.String()
}

// TestHelpPages checks every command's -h: a usage line, and no "Flags:"
// heading over nothing.
func TestHelpPages(t *testing.T) {
	for _, c := range commands() {
		if c.Name == "version" {
			continue
		}
		code, out, _ := runIn(c.Name, "-h")
		if code != 0 || !strings.HasPrefix(out, "Usage: tsinspect "+c.Name) {
			t.Errorf("%s -h: exit %d, %.60q", c.Name, code, out)
		}
		if strings.HasSuffix(strings.TrimSpace(out), "Flags:") {
			t.Errorf("%s -h ends in an empty Flags: heading", c.Name)
		}
		if strings.Contains(out, "  \n") || strings.Contains(out, c.Name+" \n") {
			t.Errorf("%s -h has trailing blanks", c.Name)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"recrod"}, `unknown command "recrod": did you mean "record"?`},
		{[]string{"turn", "x.db"}, `did you mean "turns"?`},
		{[]string{"rep"}, `did you mean "report"?`},
		{[]string{"turns", "--flaged", "x.db"}, "flag provided but not defined: -flaged (did you mean --flagged?)"},
		{[]string{"report", "--fromat", "md", "x.db"}, "(did you mean --format?)"},
	} {
		code, _, stderr := runIn(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, _, stderr := runIn("zzzzzz"); strings.Contains(stderr, "did you mean") {
		t.Errorf("a suggestion for nonsense: %q", stderr)
	}
}

func TestPlainError(t *testing.T) {
	code, _, stderr := runIn("turns", "/nonexistent/x.db")
	if code != 1 || stderr != "tsinspect: open /nonexistent/x.db: file does not exist\n" {
		t.Errorf("turns on a missing file: exit %d, %q", code, stderr)
	}
}
