package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// runIn runs a command line in process and returns its status and output.
func runIn(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(&cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}, args)
	return code, out.String(), errb.String()
}

// TestHelpPages checks every command's -h: a usage line, and no "Flags:"
// heading over nothing.
func TestHelpPages(t *testing.T) {
	for _, c := range commands() {
		if c.name == "version" {
			continue
		}
		code, out, _ := runIn(c.name, "-h")
		if code != 0 || !strings.HasPrefix(out, "Usage: tsinspect "+c.name) {
			t.Errorf("%s -h: exit %d, %.60q", c.name, code, out)
		}
		if strings.HasSuffix(strings.TrimSpace(out), "Flags:") {
			t.Errorf("%s -h ends in an empty Flags: heading", c.name)
		}
		if strings.Contains(out, "  \n") || strings.Contains(out, c.name+" \n") {
			t.Errorf("%s -h has trailing blanks", c.name)
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
	for in, want := range map[string]string{
		"ui: open: store: open x.db: file does not exist": "open x.db: file does not exist",
		"store: open x.db: not a tsinspect capture file":  "open x.db: not a tsinspect capture file",
		"ui: start the terminal: open /dev/tty: no such":  "start the terminal: open /dev/tty: no such",
		"report: write out.json: disk full":               "write out.json: disk full",
		"pricing: load prices p.json: no models":          "load prices p.json: no models",
		"capture: listen 127.0.0.1:1: address in use":     "listen 127.0.0.1:1: address in use",
		"otlp: endpoint: missing host":                    "endpoint: missing host",
		"vcr: interaction 3: no response":                 "interaction 3: no response",
	} {
		if got := plainError(in); got != want {
			t.Errorf("plainError(%q) = %q, want %q", in, got, want)
		}
	}
	code, _, stderr := runIn("turns", "/nonexistent/x.db")
	if code != 1 || stderr != "tsinspect: open /nonexistent/x.db: file does not exist\n" {
		t.Errorf("turns on a missing file: exit %d, %q", code, stderr)
	}
}

// TestEveryPackageNamed: every package of the module but the commands is
// (and the benchmarks) is one whose name plainError takes off a message,
// so that no "otlp:" or
// "vcr:" reaches a user because the list was not kept up.
func TestEveryPackageNamed(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Name}} {{.ImportPath}}", "github.com/tsinspect/tsinspect/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, path, _ := strings.Cut(line, " ")
		if name == "main" || strings.Contains(path, "/bench/") || strings.HasSuffix(path, "/e2e") || strings.HasSuffix(path, "/internal/arch") {
			continue
		}
		n++
		if !internalPackage(name) {
			t.Errorf("package %s (%s) is not in internalPackage's list: its errors would reach users as %q", name, path, name+": ...")
		}
	}
	if n < 30 {
		t.Errorf("go list named %d packages", n)
	}
}
