package canonjson

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestWriteStringGoMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \ back`, "line\nbreak\ttab\r\b\f", "\x00\x01\x1f\x7f", "<html> & 'x'",
		"naïve — ✓ 🚀", "bad \xff\xfe utf8", "\u2028\u2029", "mixed \xc3"} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		WriteString(&got, s, Options{})
		if got.String() != string(bytes.TrimRight(want.Bytes(), "\n")) {
			t.Errorf("%q: got %s, want %s", s, got.String(), want.String())
		}
	}
}

func TestWriteStringJS(t *testing.T) {
	for s, want := range map[string]string{
		"plain":            `"plain"`,
		"<a&b>\u2028é":     "\"<a&b>\u2028é\"",
		"q\"b\\\n\x01":     `"q\"b\\\n\u0001"`,
		"bad \xff":         "\"bad \xff\"",
		"\b\f\r\t\x1f end": `"\b\f\r\t\u001f end"`,
	} {
		var got bytes.Buffer
		WriteString(&got, s, Options{JS: true})
		if got.String() != want {
			t.Errorf("%q: got %s, want %s", s, got.String(), want)
		}
	}
}

func TestWrite(t *testing.T) {
	raw := []byte(`{"b":[1.50,true,null],"a":{"cache_control":{"type":"ephemeral"},"x":null,"y":"\u2028"}}`)
	v, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{}, `{"a":{"cache_control":{"type":"ephemeral"},"x":null,"y":"\u2028"},"b":[1.50,true,null]}`},
		{Options{OmitMarks: true, OmitNulls: true}, `{"a":{"y":"\u2028"},"b":[1.50,true,null]}`},
		{Options{OmitMarks: true, JS: true}, "{\"a\":{\"x\":null,\"y\":\"\u2028\"},\"b\":[1.50,true,null]}"},
	} {
		var buf bytes.Buffer
		Write(&buf, v, c.o)
		if buf.String() != c.want {
			t.Errorf("%+v: got %s, want %s", c.o, buf.String(), c.want)
		}
	}
	var buf bytes.Buffer
	Write(&buf, map[string]any{"i": 3, "f": 0.5, "r": json.RawMessage(`{"k":1}`), "s": []string{"x"}}, Options{JS: true})
	if want := `{"f":0.5,"i":3,"r":{"k":1},"s":["x"]}`; buf.String() != want {
		t.Errorf("Go values: got %s, want %s", buf.String(), want)
	}
}

// FuzzCanonical holds Canonical to Write(Decode(raw)) on every valid
// value, under every option.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		`{"b":1,"a":[true,false,null,{"z":"x","cache_control":{"type":"ephemeral"}}],"c":null}`,
		`{"a":1,"a":2}`, `{"a":1,"a":null}`, `{"\u0061":1,"a":2}`, ` [ 1 , 2.50e3 , -0 ] `, `"bad \xff utf8"`,
		`"esc \n \u2028 \ud800 \" \\"`, `{}`, `[]`, `"<&>"`, `{"k":{"k":{"k":[{}]}}}`, `{"a":1} `, `12`,
		`"\ud83d\ude80 \ud800\u0041 \udc00 \u2028   \u000a\u0022\u005c\/ \u00e9 \u007f"`, "\"raw \xe2\x80\xa8 sep\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, o := range []Options{{}, {OmitMarks: true, OmitNulls: true}, {OmitMarks: true, JS: true}} {
			var got bytes.Buffer
			ok := Canonical(&got, raw, o)
			if ok != json.Valid(raw) {
				t.Fatalf("Canonical(%q) ok = %v", raw, ok)
			}
			if !ok {
				var b bytes.Buffer
				CanonicalValid(&b, raw, o) // never panics
				continue
			}
			v, err := Decode(raw)
			if err != nil {
				t.Fatalf("Decode(%q): %v", raw, err)
			}
			var want bytes.Buffer
			Write(&want, v, o)
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("Canonical(%q, %+v) = %s, want %s", raw, o, got.Bytes(), want.Bytes())
			}
			var trusted bytes.Buffer
			if !CanonicalValid(&trusted, raw, o) || !bytes.Equal(trusted.Bytes(), want.Bytes()) {
				t.Fatalf("CanonicalValid(%q, %+v) = %s, want %s", raw, o, trusted.Bytes(), want.Bytes())
			}
		}
	})
}
