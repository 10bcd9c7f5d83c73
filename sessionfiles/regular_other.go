//go:build !unix

package sessionfiles

// openFlags: opening a pipe by name does not block on these systems.
const openFlags = 0
