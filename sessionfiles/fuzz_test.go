package sessionfiles

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
)

// FuzzSessionFile feeds arbitrary bytes to the recogniser, the reader,
// the rebuild and the listing's pass: whatever the file holds, they
// return (problems, not panics), and every exchange they give is whole.
// Lines are read up to 4 kB, so that the fuzzer reaches the over-long
// line's path with small inputs.
//
// It once missed a panic two requests away: a request keeping -1 messages
// of its base (issue 30). The seeds now hold a request built on another
// with a negative keep, one keeping more than its base has, one built on
// itself, and a line over the limit between records; testdata/fuzz keeps
// the input that panicked.
func FuzzSessionFile(f *testing.F) {
	w := twoTurns(&testing.T{})
	whole := strings.Join(w.lines, "\n") + "\n"
	f.Add([]byte(whole))
	f.Add([]byte(whole[:len(whole)/2]))
	f.Add([]byte(strings.Replace(whole, `"keep":1`, `"keep":-1`, 1)))
	f.Add([]byte(strings.Replace(whole, `"keep":1`, `"keep":99`, 1)))
	f.Add([]byte(strings.Join(w.lines[:5], "\n") + "\n" + `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("x", 5000) + `"}}` + "\n" + strings.Join(w.lines[5:], "\n") + "\n"))
	f.Add([]byte(`{"type":"api-request","id":"a","base":"a","keep":5,"tail":["x"],"cacheControl":[{"path":["messages",9,"content",-1],"value":1}]}` + "\n"))
	f.Add([]byte(`{"type":"api-request","id":"a","keep":0,"tail":[]}` + "\n" + `{"type":"api-request","id":"b","base":"a","keep":-7,"tail":[]}` + "\n"))
	f.Add([]byte(`{"type":"api-request-shape","shapeHash":"s","shape":{"system":"x","tools":{}}}` + "\n"))
	// One file per worker, written over for each input: a directory per
	// input made the target run at about 100 inputs a second.
	p := filepath.Join(f.TempDir(), "0b5e1d2c-0000-4000-8000-000000000001.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := Recognise(p); err != nil && !errors.Is(err, ErrNotSession) {
			t.Fatalf("Recognise: %v", err)
		}
		_ = PrintedSession(data)
		s, err := openWith(p, 1<<12)
		if err != nil {
			return
		}
		_ = s.Stream(context.Background(), func(ex *exchange.Exchange) error {
			if ex.ID < 1 || ex.ReqBody == nil || ex.RespBody == nil {
				t.Fatalf("exchange %+v", ex)
			}
			return nil
		})
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Summarize(entryOf(p, info)); err != nil {
			t.Fatal(err)
		}
	})
}
