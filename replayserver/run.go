package replayserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/tsinspect/tsinspect/internal/numfmt"
)

// Run serves the capture called name on ln until SIGINT or SIGTERM, after
// saying on out where it listens and what the client's shell must export;
// then it says on log how many requests it answered and how many had no
// recorded response.
func (s *Server) Run(ln net.Listener, name string, out, log io.Writer) error {
	addr := ln.Addr().String()
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(out, "tsinspect: replaying %s of %s at http://%s; Ctrl-C to stop.\nIn the shell that runs the client:\n  export ANTHROPIC_BASE_URL=http://%s\n  export ENABLE_TOOL_SEARCH=true\n",
		numfmt.Count(s.Len(), "exchange", "exchanges"), name, addr, addr)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	select {
	case <-sig:
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("replay-server: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = hs.Shutdown(ctx)
	ms := s.Matches()
	unmatched := 0
	for _, m := range ms {
		if m.Recorded == 0 {
			unmatched++
		}
	}
	fmt.Fprintf(log, "tsinspect: replay served %d %s, %d without a recorded response\n", len(ms), numfmt.Plural(len(ms), "request", "requests"), unmatched)
	return nil
}
