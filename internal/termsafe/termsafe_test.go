package termsafe

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The inputs of issue 30, row 10: what reached the terminal raw.
var hostile = map[string]string{
	"ESC":       "2.1.328\x1b[2J",
	"OSC 52":    "mcp__x__y\x1b]52;c;ZWNobyBwd25lZA==\x07",
	"CSI":       "tool\x1b[31mred",
	"BEL":       "ding\x07",
	"C1 CSI":    "a\u009b31mb",
	"8-bit CSI": "a\x9b31mb",
	"bidi":      "safe\u202eexe.txt",
	"isolate":   "x\u2066y\u2069",
	"DEL":       "a\x7fb",
	"NUL":       "a\x00b",
	"CR":        "overwrite\rme",
}

func TestNothingAnyTerminalActsOnGetsThrough(t *testing.T) {
	for name, in := range hostile {
		for _, out := range []string{Line(in), Text(in)} {
			for _, r := range out {
				if Unsafe(r) {
					t.Errorf("%s: %q still holds %U", name, out, r)
				}
			}
			if strings.ContainsRune(out, 0xfffd) || strings.ContainsAny(out, "\x1b\x07\x00\r") {
				t.Errorf("%s: %q", name, out)
			}
		}
	}
	if got := Line(hostile["OSC 52"]); got != `mcp__x__y\u001b]52;c;ZWNobyBwd25lZA==\u0007` {
		t.Errorf("OSC 52 shown as %q", got)
	}
	if got := Line(hostile["8-bit CSI"]); got != `a\x9b31mb` {
		t.Errorf("a byte that is not UTF-8: %q", got)
	}
	if got := Line("tab\tnewline\n"); got != `tab\u0009newline\u000a` {
		t.Errorf("Line %q", got)
	}
	if got := Text("tab\tnewline\n"); got != "tab\tnewline\n" {
		t.Errorf("Text %q", got)
	}
	for _, s := range []string{"plain", "émoji 🙂 and CJK 漢字", "≈$0.0988 ▲ ─"} {
		if Line(s) != s {
			t.Errorf("%q changed to %q", s, Line(s))
		}
	}
}

// JSON written through Writer stays valid and means the same.
func TestWriterKeepsJSONValid(t *testing.T) {
	var buf bytes.Buffer
	in := map[string]string{}
	for k, v := range hostile {
		if k != "8-bit CSI" { // not UTF-8: encoding/json writes U+FFFD for it
			in[k] = v
		}
	}
	if err := json.NewEncoder(Writer(&buf)).Encode(in); err != nil {
		t.Fatal(err)
	}
	var back map[string]string
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	for k, v := range in {
		if back[k] != v {
			t.Errorf("%s: %q came back %q", k, v, back[k])
		}
	}
	for _, r := range buf.String() {
		if Unsafe(r) && r != '\n' {
			t.Errorf("%U in %s", r, buf.Bytes())
		}
	}
}

// TestWriterCharacterCutBetweenWrites writes text with characters of two,
// three and four bytes cut at every place between two writes (as a
// buffered writer flushes where its buffer ends): each passes whole, and
// only a byte that begins no character is escaped.
func TestWriterCharacterCutBetweenWrites(t *testing.T) {
	text := "a ≥ b — “c” é 🙂 end\n"
	for cut := 0; cut <= len(text); cut++ {
		var out strings.Builder
		w := Writer(&out)
		if n, err := w.Write([]byte(text[:cut])); err != nil || n != cut {
			t.Fatalf("cut %d: first write %d, %v", cut, n, err)
		}
		if n, err := w.Write([]byte(text[cut:])); err != nil || n != len(text)-cut {
			t.Fatalf("cut %d: second write %d, %v", cut, n, err)
		}
		if out.String() != text {
			t.Errorf("cut at %d: %q", cut, out.String())
		}
	}
	var out strings.Builder
	w := Writer(&out)
	w.Write([]byte("x\xffy\n"))
	if out.String() != `x\xffy`+"\n" {
		t.Errorf("a stray byte: %q", out.String())
	}
}
