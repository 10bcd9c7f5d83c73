package exchange

import (
	"net/http"
	"reflect"
	"sort"
	"testing"
)

// TestRemoveHopHeaders: the hop-by-hop fields go, and so do those the
// Connection header names; the rest stay.
func TestRemoveHopHeaders(t *testing.T) {
	h := http.Header{}
	h.Set("Connection", "keep-alive, X-Trace-Hop, upgrade")
	h.Set("X-Trace-Hop", "1")
	h.Set("Keep-Alive", "timeout=5")
	h.Set("Transfer-Encoding", "chunked")
	h.Set("Upgrade", "h2c")
	h.Set("Te", "trailers")
	h.Set("Content-Type", "application/json")
	h.Set("Anthropic-Beta", "x")
	RemoveHopHeaders(h)
	var left []string
	for k := range h {
		left = append(left, k)
	}
	sort.Strings(left)
	if want := []string{"Anthropic-Beta", "Content-Type"}; !reflect.DeepEqual(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
	if got := ConnectionOptions([]string{"close", " x-a ,X-B", ""}); !reflect.DeepEqual(got, []string{"X-A", "X-B"}) {
		t.Errorf("options %v", got)
	}
	if IsHop("content-type", []string{"X-A"}) || !IsHop("x-a", []string{"X-A"}) || !IsHop("proxy-connection", nil) {
		t.Error("IsHop")
	}
}
