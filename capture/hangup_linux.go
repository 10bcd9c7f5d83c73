package capture

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// peerClosed reports whether the peer of c has shut its side of the
// connection down, without reading from it: data the peer sent before (a
// TLS close_notify, say) stays unread for whoever reads c.
func peerClosed(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
		n, err := unix.Poll(fds, 0)
		closed = err == nil && n > 0 && fds[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0
	})
	return closed
}
