// Package listenaddr reads the addresses tsinspect's servers listen on
// (the --listen of record, replay-server, serve and standin): HOST:PORT
// with a port from 0 (any free one) to 65535, and whether the host is
// this machine alone.
package listenaddr

import (
	"errors"
	"net"
	"strconv"
	"syscall"
)

// ValidPort reports whether port is a TCP port number (0: any free one).
func ValidPort(port string) bool {
	n, err := strconv.Atoi(port)
	return err == nil && n >= 0 && n <= 65535
}

// Host returns the host of addr; ok is false when addr is not HOST:PORT
// with a valid port.
func Host(addr string) (host string, ok bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || !ValidPort(port) {
		return "", false
	}
	return host, true
}

// Loopback reports whether host names this machine alone: localhost, or
// a loopback IP address.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// InUseHint is what command cmd adds to an error of listening on an
// address another program holds: how to get a free port; "" for another
// error.
func InUseHint(cmd string, err error) string {
	if errors.Is(err, syscall.EADDRINUSE) {
		return " (is another tsinspect " + cmd + " running? --listen 127.0.0.1:0 picks a free port)"
	}
	return ""
}
