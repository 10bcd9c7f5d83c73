package decode

import (
	"bytes"
	"encoding/json"
	"testing"
)

// checkScan compares the scanner with encoding/json on one valid JSON
// text: objects split into the same members, arrays into the same
// elements, strings decode to the same text.
func checkScan(t *testing.T, b []byte) {
	if !json.Valid(b) {
		return
	}
	// encoding/json also "decodes" null into a string, leaving it empty;
	// only a JSON string is unquote's to decode.
	var s string
	if tb := bytes.TrimSpace(b); len(tb) > 0 && tb[0] == '"' && json.Unmarshal(b, &s) == nil {
		got, ok := unquote([]byte(trimmed(b)))
		if !ok || got != s {
			t.Fatalf("unquote(%q) = %q %v, want %q", b, got, ok, s)
		}
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) == nil && m != nil {
		o, ok := parseObject(b)
		if !ok {
			t.Fatalf("parseObject(%q) failed", b)
		}
		for k, v := range m {
			if !jsonEqual(o.get(k), v) {
				t.Fatalf("parseObject(%q)[%q] = %s, want %s", b, k, o.get(k), v)
			}
		}
		if !jsonEqual(o.marshal(), b) {
			t.Fatalf("marshal(parseObject(%q)) = %s", b, o.marshal())
		}
	}
	var a []json.RawMessage
	if json.Unmarshal(b, &a) == nil && a != nil {
		elems, ok := parseArray(b)
		if !ok || len(elems) != len(a) {
			t.Fatalf("parseArray(%q) = %d elems %v, want %d", b, len(elems), ok, len(a))
		}
		for i := range a {
			if !jsonEqual(elems[i], a[i]) {
				t.Fatalf("parseArray(%q)[%d] = %s, want %s", b, i, elems[i], a[i])
			}
		}
	}
}

func trimmed(b []byte) string {
	i, j := 0, len(b)
	for i < j && isSpace(b[i]) {
		i++
	}
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return string(b[i:j])
}

var scanSeeds = []string{
	`{}`, `[]`, `""`, `"plain"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u20ac\ud83d\ude00"`,
	`"\ud800"`, `"\udc00x"`, `"\ud800\u0041"`, "\"\xff\xfe\"", `"é€😀"`,
	`{"a":1,"b":[1,2,{"c":"}"}],"d":"\\","e":null,"a":2}`,
	` { "k" : "v" , "n" : -1.5e3 , "t" : true } `,
	`[1, "two", [3], {"4": 4}, null, false]`,
	`{"\u006b":"escaped key","k\"q":1}`,
	`{"text":"line\nbreak \"quoted\" \\\\ end\\"}`,
}

func TestJSONScan(t *testing.T) {
	for _, s := range scanSeeds {
		if !json.Valid([]byte(s)) {
			t.Fatalf("seed not valid JSON: %s", s)
		}
		checkScan(t, []byte(s))
	}
	for _, bad := range []string{`{"a":}`, `{"a" 1}`, `[1,`, `"abc`, `{`} {
		if _, ok := parseObject([]byte(bad)); ok && bad[0] == '{' {
			t.Errorf("parseObject(%q) ok", bad)
		}
		if _, ok := parseArray([]byte(bad)); ok && bad[0] == '[' {
			t.Errorf("parseArray(%q) ok", bad)
		}
	}
	if n, ok := parseInt([]byte("1e3")); !ok || n != 1000 {
		t.Errorf("parseInt(1e3) = %d %v", n, ok)
	}
	if _, ok := parseInt([]byte("1.5")); ok {
		t.Error("parseInt(1.5) ok")
	}
}

// FuzzJSONScan checks the scanner against encoding/json.
func FuzzJSONScan(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkScan(t, b)
	})
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
