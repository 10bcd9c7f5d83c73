package capture

import (
	"context"
	"net"
	"time"
)

// connKey is the context key under which ConnContext keeps the client's
// connection.
type connKey struct{}

// ConnContext is to be set as the http.Server's ConnContext. It lets the
// proxy notice, in MITM mode, a client that hangs up while the upstream has
// not answered yet: goproxy reads the decrypted requests itself, so their
// contexts never learn that the client went away, and the upstream request
// would go on until the upstream answers.
func (p *Proxy) ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// hangUpPoll is how often a waiting request checks its client.
const hangUpPoll = 50 * time.Millisecond

// watchHangUp cancels cancel as soon as the client at the other end of c
// has closed the connection, until stop is closed.
func watchHangUp(c net.Conn, stop <-chan struct{}, cancel context.CancelFunc) {
	t := time.NewTicker(hangUpPoll)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if peerClosed(c) {
				cancel()
				return
			}
		}
	}
}
