//go:build !unix

package store

// writerLock is a no-op where flock is not available: two writers of one
// capture are not kept apart there.
type writerLock struct{}

func lockWriter(string) (*writerLock, error) { return &writerLock{}, nil }

func (l *writerLock) release() {}
