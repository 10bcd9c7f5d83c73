package timeline

import (
	"fmt"
	"testing"

	"github.com/tsinspect/tsinspect/decode"
)

// TestListMediaAsEachMessage holds the sums kept per shared array to the
// media bytes of each message of a list, counted afresh, over lists as
// decode shares them: one extending another in its array, a shorter one
// from the same array after a longer, a list that parted from the array
// (its own, with a different message where they part), and no memo.
func TestListMediaAsEachMessage(t *testing.T) {
	msg := func(n int) *decode.Message {
		data := fmt.Sprintf(`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"%0*d"}}`, n, 0)
		return &decode.Message{Role: "user", Blocks: []decode.Block{{Type: "image", Raw: []byte(data)}}}
	}
	array := make([]*decode.Message, 0, 8)
	for i := 1; i <= 8; i++ {
		array = append(array, msg(10*i))
	}
	parted := append([]*decode.Message(nil), array[:3]...)
	parted = append(parted, msg(7))
	want := func(ms []*decode.Message) int {
		n := 0
		for _, m := range ms {
			n += (*Estimates)(nil).mediaBytes(m)
		}
		return n
	}
	e := NewEstimates()
	for _, ms := range [][]*decode.Message{array[:2], array[:5], array[:3], array[:8], parted, array[:1], nil} {
		if got, w := e.listMedia(ms), want(ms); got != w {
			t.Errorf("list of %d: %d media bytes, want %d", len(ms), got, w)
		}
		if got, w := (*Estimates)(nil).listMedia(ms), want(ms); got != w {
			t.Errorf("list of %d with no memo: %d media bytes, want %d", len(ms), got, w)
		}
	}
	if want(array[:2]) == 0 {
		t.Fatal("the images counted no media bytes")
	}
}
