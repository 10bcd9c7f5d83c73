package sessionfiles

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
)

// FuzzSessionFile feeds arbitrary bytes to the reader, the rebuild and
// the listing's pass: whatever the file holds, they return (problems,
// not panics), and every exchange they give is whole.
func FuzzSessionFile(f *testing.F) {
	w := twoTurns(&testing.T{})
	whole := strings.Join(w.lines, "\n") + "\n"
	f.Add([]byte(whole))
	f.Add([]byte(whole[:len(whole)/2]))
	f.Add([]byte(`{"type":"api-request","id":"a","base":"a","keep":5,"tail":["x"],"cacheControl":[{"path":["messages",9,"content",-1],"value":1}]}` + "\n"))
	f.Add([]byte(`{"type":"api-request-shape","shapeHash":"s","shape":{"system":"x","tools":{}}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "0b5e1d2c-0000-4000-8000-000000000001.jsonl")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(p)
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
