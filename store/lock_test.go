package store

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestWriterLock: while one handle from OpenWriter is open, a second
// writer and CheckTarget are refused with ErrBusy naming this process,
// readers read, and once it is closed the lock file is gone and the
// capture can be written again.
func TestWriterLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	first, err := OpenWriter(path, false)
	if err != nil {
		t.Fatal(err)
	}
	ex := fullExchange()
	if err := first.Insert(context.Background(), &ex); err != nil {
		t.Fatal(err)
	}
	_, err = OpenWriter(path, true)
	var be *BusyError
	if !errors.Is(err, ErrBusy) || !errors.As(err, &be) || be.PID != os.Getpid() {
		t.Fatalf("second writer: %v, want ErrBusy naming process %d", err, os.Getpid())
	}
	if err := CheckTarget(path); !errors.Is(err, ErrBusy) {
		t.Errorf("CheckTarget while written: %v", err)
	}
	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatalf("a reader is refused while the capture is written: %v", err)
	}
	if exs, err := r.Exchanges(context.Background()); err != nil || len(exs) != 1 {
		t.Errorf("reader: %d exchanges, %v", len(exs), err)
	}
	r.Close()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(LockPath(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the lock file is left after Close: %v", err)
	}
	if err := CheckTarget(path); err != nil {
		t.Errorf("CheckTarget after Close: %v", err)
	}
	again, err := OpenWriter(path, false)
	if err != nil {
		t.Fatalf("writer after Close: %v", err)
	}
	again.Close()
}

// TestWriterLockAcrossProcesses holds the lock in another process: this
// one is refused and told which process holds it; once that process is
// killed (SIGKILL: it closes nothing), the lock is free though its file
// is left behind.
func TestWriterLockAcrossProcesses(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no writer lock on " + runtime.GOOS)
	}
	path := filepath.Join(t.TempDir(), "c.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHoldWriterLock$")
	cmd.Env = append(os.Environ(), "TSINSPECT_HOLD_LOCK="+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "held" {
		t.Fatalf("the other process did not take the lock: %q, %v", line, err)
	}
	_, err = OpenWriter(path, false)
	var be *BusyError
	if !errors.As(err, &be) || be.PID != cmd.Process.Pid {
		t.Fatalf("writer while another process writes: %v, want ErrBusy naming process %d", err, cmd.Process.Pid)
	}
	if err := cmd.Process.Signal(os.Kill); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if _, err := os.Stat(LockPath(path)); err != nil {
		t.Fatalf("the killed process's lock file: %v", err)
	}
	db, err := OpenWriter(path, false)
	if err != nil {
		t.Fatalf("writer after the holder was killed: %v", err)
	}
	db.Close()
}

// TestHoldWriterLock is the other process of TestWriterLockAcrossProcesses:
// it opens the capture for writing, says "held", and waits for its
// standard input to close (or to be killed).
func TestHoldWriterLock(t *testing.T) {
	path := os.Getenv("TSINSPECT_HOLD_LOCK")
	if path == "" {
		t.Skip("run by TestWriterLockAcrossProcesses")
	}
	db, err := OpenWriter(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	os.Stdout.WriteString("held\n")
	done := make(chan struct{})
	go func() {
		buf := make([]byte, 1)
		os.Stdin.Read(buf)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
	}
}
