//go:build !unix

package regfile

// openFlags: opening a pipe by name does not block on these systems.
const openFlags = 0
