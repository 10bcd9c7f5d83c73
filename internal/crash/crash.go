// Package crash turns a panic into an error a user can read: one line
// that says what was being done, what went wrong, and where in tsinspect,
// instead of a stack trace and a terminal left in raw mode. A panic is a
// bug in tsinspect whatever its input; the line asks for a report.
package crash

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
)

// Error is the error of a panic recovered while doing op (as "read
// session x.jsonl"): r is what recover returned. Call it in the deferred
// function that recovered, so that the place of the panic is still on the
// stack.
func Error(op string, r any) error {
	where := site()
	if where != "" {
		where = " at " + where
	}
	return fmt.Errorf("%s: internal error%s: %v (a bug in tsinspect: please report it with 'tsinspect version' and, if you can, the input)", op, where, r)
}

// Recover is deferred by a function with a named error result: a panic
// becomes Error(op, r) in *err.
//
//	func Read(path string) (err error) {
//		defer crash.Recover("read "+path, &err)
func Recover(op string, err *error) {
	if r := recover(); r != nil {
		*err = Error(op, r)
	}
}

// site is the function and line of tsinspect's code where the panic
// happened: the first frame below the runtime's panic machinery that is
// not in the runtime or this package.
func site() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	panicking := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic" || strings.HasPrefix(f.Function, "runtime.panic") || strings.HasPrefix(f.Function, "runtime.goPanic"):
			panicking = true
		case panicking && !strings.HasPrefix(f.Function, "runtime.") && !isOwn(f.Function):
			name := f.Function
			if i := strings.LastIndexByte(name, '/'); i >= 0 {
				name = name[i+1:]
			}
			return fmt.Sprintf("%s (%s:%d)", name, filepath.Base(f.File), f.Line)
		}
		if !more {
			return ""
		}
	}
}

// isOwn reports whether fn is one of this package's own functions.
func isOwn(fn string) bool {
	for _, own := range []string{"/internal/crash.Recover", "/internal/crash.Error", "/internal/crash.site"} {
		if strings.HasSuffix(fn, own) {
			return true
		}
	}
	return false
}
