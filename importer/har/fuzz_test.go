package har

import (
	"bytes"
	"testing"
)

// FuzzRead reads arbitrary bytes as a HAR: no panic; input that is read
// gives exchanges that export again.
//
// Run: go test ./importer/har -run '^$' -fuzz FuzzRead -fuzztime 10m
func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	if err := Write(&buf, sample(), "fuzz", Options{Exact: true}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"log":{"entries":[{"request":{"method":"GET","url":"http://x/"},"response":{"status":200,"content":{"text":"aGk=","encoding":"base64"}}}]}}`))
	f.Add([]byte(`{"log":{"entries":[{}, null, 7, {"_tsinspect":{"v":1}}]}}`))
	f.Add([]byte(`[[[[[[[[[[[[[[[[[[[[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := Read(bytes.NewReader(b))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := Write(&out, res.Exchanges, "fuzz", Options{Exact: true}); err != nil {
			t.Fatalf("re-export of what was read: %v", err)
		}
	})
}
