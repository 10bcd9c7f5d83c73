package contentcoding

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

func TestDecodeEachCoding(t *testing.T) {
	plain := bytes.Repeat([]byte("event: ping\ndata: {}\n\n"), 50)
	enc := map[string]func([]byte) []byte{
		"gzip": func(b []byte) []byte {
			var buf bytes.Buffer
			w := gzip.NewWriter(&buf)
			w.Write(b)
			w.Close()
			return buf.Bytes()
		},
		"deflate": func(b []byte) []byte {
			var buf bytes.Buffer
			w := zlib.NewWriter(&buf)
			w.Write(b)
			w.Close()
			return buf.Bytes()
		},
		"br": func(b []byte) []byte {
			var buf bytes.Buffer
			w := brotli.NewWriter(&buf)
			w.Write(b)
			w.Close()
			return buf.Bytes()
		},
		"zstd": func(b []byte) []byte {
			w, _ := zstd.NewWriter(nil)
			return w.EncodeAll(b, nil)
		},
	}
	for name, f := range enc {
		got, err := Decode(name, f(plain))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, plain) {
			t.Fatalf("%s: decoded body differs", name)
		}
	}
	// Two codings, applied in order gzip then br: decode br first.
	got, err := Decode("gzip, br", enc["br"](enc["gzip"](plain)))
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("stacked codings: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	if _, err := Decode("gzip", []byte("not gzip")); err == nil {
		t.Fatal("corrupt gzip: want error")
	}
	if _, err := Decode("compress", []byte("x")); err == nil {
		t.Fatal("unknown coding: want error")
	}
	if got, err := Decode("", []byte("x")); err != nil || string(got) != "x" {
		t.Fatal("identity must pass through")
	}
}
