package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/web"
)

// A Claude Code session's first opening is served from the listing while
// it is read: its answers with the figures the listing has for them (the
// row's cost), then, once read, its turns. The demo session (four
// answers, $0.0998 on the sessions page) is read in a moment: when the
// first answer is already the whole reading, the light list is not
// checked.
func TestFirstOpeningFromTheListing(t *testing.T) {
	dir, _ := fixture(t)
	s := serve(t, web.Options{Roots: []string{dir}, Policy: redact.Off})
	const key = "76805962-ccee-4e9e-8dd8-bbece00290ac"
	var first struct {
		turnsJSON
		Light bool `json:"light"`
	}
	getJSON(t, s, "/api/s/"+key+"/turns", &first)
	if first.Light {
		if len(first.Turns) != 4 || !strings.Contains(first.Header, "4 answers as the listing read them ($0.0998") {
			t.Errorf("the light list: %d rows, %q; want the 4 answers and the row's $0.0998", len(first.Turns), first.Header)
		}
		for _, r := range first.Turns {
			if len(r.Cells) != len(first.Columns) {
				t.Errorf("a light row of %d cells under %d columns", len(r.Cells), len(first.Columns))
			}
		}
	} else {
		t.Log("the session was read before the first answer: the light list was not served")
	}
	// Asked again until read (go test's own -timeout bounds it).
	for {
		var full struct {
			turnsJSON
			Light bool `json:"light"`
		}
		getJSON(t, s, "/api/s/"+key+"/turns", &full)
		if !full.Light {
			if len(full.Turns) != 4 || full.Turns[0].I != 1 {
				t.Errorf("the turns read: %+v", full.Turns)
			}
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
}
