package importer

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// defaultProgressMin is the file size from which a progress bar is drawn.
const defaultProgressMin = 4 << 20

// bar draws a one-line progress bar, redrawn in place with a carriage
// return at most ten times a second. A nil *bar draws nothing.
type bar struct {
	w     io.Writer
	total int64
	name  string
	last  time.Time
	done  int64
	drawn bool
}

func newBar(w io.Writer, total, minSize int64, name string) *bar {
	if minSize <= 0 {
		minSize = defaultProgressMin
	}
	if w == nil || total < minSize {
		return nil
	}
	return &bar{w: w, total: total, name: name}
}

func (b *bar) update(done int64) {
	if b == nil {
		return
	}
	b.done = done
	if now := time.Now(); now.Sub(b.last) >= 100*time.Millisecond {
		b.last = now
		b.draw()
	}
}

func (b *bar) draw() {
	const width = 30
	frac := float64(b.done) / float64(b.total)
	frac = min(max(frac, 0), 1)
	full := int(frac * width)
	fmt.Fprintf(b.w, "\rimporting %s [%s%s] %3d%% %s/%s", b.name, strings.Repeat("=", full), strings.Repeat(" ", width-full),
		int(frac*100), mb(b.done), mb(b.total))
	b.drawn = true
}

// finish draws the bar at its end and ends its line.
func (b *bar) finish() {
	if b == nil {
		return
	}
	b.done = b.total
	b.draw()
	fmt.Fprintln(b.w)
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
