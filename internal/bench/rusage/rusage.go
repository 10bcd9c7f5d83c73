// Package rusage runs a command for a benchmark and reports what it cost
// as a whole process: its CPU time (user + system) and peak resident
// memory, from getrusage.
package rusage

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
)

// Usage is what a finished command cost.
type Usage struct {
	CPU time.Duration
	RSS int64 // peak resident memory, bytes
}

// Run runs name with args, env added to this process's environment, its
// output discarded. Exit status 3 (a tsinspect command that found what it
// reports, flags) is no failure; another is an error with the command's
// first words and standard error.
func Run(name string, args, env []string) (Usage, error) {
	// A child starts sharing this process's memory until it executes its
	// command, and the kernel counts that in its peak RSS: what this
	// process made goes back to the system first.
	debug.FreeOSMemory()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = io.Discard
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		err = nil
	}
	if err != nil {
		return Usage{}, fmt.Errorf("%s %s: %w: %.300s", filepath.Base(name), strings.Join(args[:min(len(args), 3)], " "), err, stderr.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return Usage{}, errors.New("no rusage on this system")
	}
	return Usage{CPU: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), RSS: ru.Maxrss * 1024}, nil
}
