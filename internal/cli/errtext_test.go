package cli

import (
	"os/exec"
	"strings"
	"testing"
)

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
		if got := PlainError(in); got != want {
			t.Errorf("PlainError(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEveryPackageNamed: every package of the module but the commands is
// (and the benchmarks) is one whose name PlainError takes off a message,
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
