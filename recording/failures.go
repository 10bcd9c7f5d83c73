package recording

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tsinspect/tsinspect/capture"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/numfmt"
)

// FailureLog prints a line per recording failure as it happens: an
// exchange whose upstream failed or that the API answered with an
// overload, rate-limit or server error, and a tunnel to another host that
// could not be opened. At most burst lines are printed per window; the
// rest are counted, and the next line printed says how many were left out.
type FailureLog struct {
	mu     sync.Mutex
	w      io.Writer
	now    func() time.Time
	window time.Duration
	burst  int

	start   time.Time // of the current window
	printed int       // lines printed in it
	skipped int       // failures not printed since the last line
}

func NewFailureLog(w io.Writer) *FailureLog {
	return &FailureLog{w: w, now: time.Now, window: 10 * time.Second, burst: 5}
}

// failed reports whether ex is a failure worth a line.
func failed(ex *exchange.Exchange) bool {
	switch {
	case ex.State == exchange.StateUpstreamFailed:
		return true
	case ex.State == exchange.StateInFlight:
		return false
	}
	return ex.Status == 429 || ex.Status >= 500
}

// exchange prints a line for ex if it failed.
func (l *FailureLog) Exchange(ex *exchange.Exchange) {
	if failed(ex) {
		l.printf("failed: %s", FlowLine(ex))
	}
}

// tunnel prints a line for a tunnel that could not be opened.
func (l *FailureLog) Tunnel(hostport string, err error) {
	l.printf("failed: tunnel to %s (not recorded): %v", hostport, UnwrapOp(err))
}

func (l *FailureLog) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.Sub(l.start) >= l.window {
		l.start, l.printed = now, 0
	}
	if l.printed >= l.burst {
		l.skipped++
		return
	}
	l.printed++
	line := "tsinspect: " + fmt.Sprintf(format, args...)
	if l.skipped > 0 {
		line += fmt.Sprintf(" (and %d more failures not shown)", l.skipped)
		l.skipped = 0
	}
	fmt.Fprintln(l.w, line)
}

// FlowLine describes a recorded exchange in one line: when it started,
// the request, and what came back.
func FlowLine(ex *exchange.Exchange) string {
	target := ex.URL
	if u, err := url.Parse(ex.URL); err == nil {
		target = u.RequestURI()
		if !strings.EqualFold(u.Hostname(), capture.DefaultHost) && u.Host != "" {
			target = u.Host + target
		}
	}
	line := fmt.Sprintf("%s %s %s → ", ex.Start.Local().Format("15:04:05.000"), ex.Method, target)
	if ex.Status != 0 {
		line += fmt.Sprintf("%d, ", ex.Status)
	}
	line += numfmt.Bytes(int64(len(ex.RespBody)))
	if d := ex.End.Sub(ex.Start); !ex.End.IsZero() && d < time.Millisecond {
		line += " in <1ms"
	} else if !ex.End.IsZero() {
		line += " in " + d.Round(time.Millisecond).String()
	}
	if ex.State != exchange.StateComplete {
		line += ", " + string(ex.State)
		if ex.Error != "" {
			line += ": " + ex.Error
		}
	}
	return line
}

func UnwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}
