package decode

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

var validSeeds = []string{
	``, ` `, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `1e`, `1e+`, `1E-7`, `-12.5e3`, `true`, `tru`, `false`, `null`, `nul`,
	`""`, `"a\"b"`, `"\u00e9"`, `"\u00g9"`, `"\x"`, "\"a\tb\"", `"unterminated`, `"\`,
	`{}`, `{ }`, `{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{1:2}`, `{"a":1 "b":2}`, `{"a":{"b":[1,2,{"c":null}]}}`,
	`[]`, `[1,2]`, `[1,]`, `[,1]`, `[1 2]`, `[[[]]]`, `[[[]]`, `[]]`, `{"a":[}`, `1 2`, ` {} `, "\n[1]\r\n",
	`{"a":"b"}x`, `[true,false,null]`, `"\ud83d\ude00"`, "\"\xff\"",
}

func TestIsJSONMatchesEncodingJSON(t *testing.T) {
	seeds := append([]string(nil), validSeeds...)
	seeds = append(seeds, strings.Repeat("[", maxDepth)+strings.Repeat("]", maxDepth))
	seeds = append(seeds, strings.Repeat("[", maxDepth+1)+strings.Repeat("]", maxDepth+1))
	seeds = append(seeds, strings.Repeat(`{"a":`, maxDepth)+"1"+strings.Repeat("}", maxDepth))
	for _, s := range seeds {
		if got, want := isJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("isJSON(%.40q) = %v, encoding/json says %v", s, got, want)
		}
	}
	for _, name := range []string{"01-first-request.json", "04-subagent-first-request.json", "05-resumed-on-new-model.json"} {
		b := readFile(t, filepath.Join(sampleDir(t), name))
		if !isJSON(b) {
			t.Errorf("%s: real request not accepted", name)
		}
		if cut := bytes.TrimRight(b, " \n"); isJSON(cut[:len(cut)-1]) {
			t.Errorf("%s: truncated request accepted", name)
		}
	}
}

func FuzzIsJSON(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := isJSON(b), json.Valid(b); got != want {
			t.Fatalf("isJSON(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

func BenchmarkIsJSON(b *testing.B) {
	body := readFile(b, filepath.Join(sampleDir(b), "01-first-request.json"))
	b.SetBytes(int64(len(body)))
	b.Run("isJSON", func(b *testing.B) {
		for b.Loop() {
			isJSON(body)
		}
	})
	b.Run("encoding/json.Valid", func(b *testing.B) {
		for b.Loop() {
			json.Valid(body)
		}
	})
}

// TestIsJSONStringsWordByWord: strings whose quote, backslash, control
// character or high byte falls at every place of an eight-byte word are
// told as encoding/json tells them.
func TestIsJSONStringsWordByWord(t *testing.T) {
	for n := range 24 {
		for at := range n {
			for _, c := range []byte{'"', '\\', 0x1f, 0x00, 0x20, 0x7f, 0x80, 0xff, 'a'} {
				s := []byte(`"` + strings.Repeat("x", n) + `"`)
				s[1+at] = c
				if got, want := isJSON(s), json.Valid(s); got != want {
					t.Fatalf("%q: isJSON %v, encoding/json %v", s, got, want)
				}
			}
		}
	}
}
