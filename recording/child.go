package recording

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/tsinspect/tsinspect/capture"
	"github.com/tsinspect/tsinspect/internal/shell"
)

func ReadCerts(path string) ([]*x509.Certificate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("record: --upstream-ca: %w", err)
	}
	var out []*x509.Certificate
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("record: --upstream-ca %s: %w", path, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("record: --upstream-ca %s: no PEM certificate in it", path)
	}
	return out, nil
}

// ExportsFor returns the entries to print for another shell: the child's,
// and in reverse mode always ENABLE_TOOL_SEARCH, which ExportLine writes so
// that the other shell's own value is kept (this shell's says nothing
// about it).
func ExportsFor(mode string, childEnv []string) []string {
	if mode != capture.ModeReverse {
		return childEnv
	}
	for _, kv := range childEnv {
		if strings.HasPrefix(kv, "ENABLE_TOOL_SEARCH=") {
			return childEnv
		}
	}
	return append(append([]string(nil), childEnv...), "ENABLE_TOOL_SEARCH=true")
}

// ExportLine turns a KEY=VALUE entry into what follows "export " in a
// POSIX shell. ENABLE_TOOL_SEARCH is record's default only: the line keeps
// a value the other shell already has.
func ExportLine(kv string) string {
	k, v, _ := strings.Cut(kv, "=")
	if k == "ENABLE_TOOL_SEARCH" {
		return fmt.Sprintf("%s=\"${%s:-%s}\"", k, k, v)
	}
	return k + "=" + shell.Quote(v)
}

// RunChild runs the command with the terminal passed through and returns
// its exit status. SIGINT reaches the child from the terminal by itself;
// SIGTERM and SIGHUP sent to tsinspect are passed on.
func RunChild(argv, extra []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = stdin
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.Env = mergeEnv(os.Environ(), extra)
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sig)
	if err := cmd.Start(); err != nil {
		return 127, fmt.Errorf("record: start %s: %w", filepath.Base(argv[0]), err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sig:
			if s != os.Interrupt {
				_ = cmd.Process.Signal(s)
			}
		case err := <-done:
			if err == nil {
				return 0, nil
			}
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					return 128 + int(ws.Signal()), nil
				}
				return ee.ExitCode(), nil
			}
			return 1, fmt.Errorf("record: %s: %w", filepath.Base(argv[0]), err)
		}
	}
}

// mergeEnv returns base with the KEY=VALUE entries of extra replacing any
// entry of the same key.
func mergeEnv(base, extra []string) []string {
	keys := map[string]bool{}
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		keys[k] = true
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !keys[k] {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// OpenCommandOutput creates or truncates the file that takes the output of
// the command run beside the live UI. Its name is derived from --db, not
// given by the user, so a symbolic link, device or anything but a regular
// file there is refused rather than followed or written through.
func OpenCommandOutput(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s exists and is not a regular file; remove it or choose another --db", path)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return f, nil
}
