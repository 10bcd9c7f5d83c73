//go:build unix

package regfile

import "syscall"

// openFlags make opening a named pipe return at once instead of waiting
// for a writer; they change nothing for a regular file.
const openFlags = syscall.O_NONBLOCK
