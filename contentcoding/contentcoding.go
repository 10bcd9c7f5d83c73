// Package contentcoding removes HTTP content codings (gzip, deflate, br,
// zstd) from bodies, and gives the capture store its zstd frames
// (ZstdEncoder, ZstdDecoder). It is the only package that imports the
// brotli and zstd libraries.
package contentcoding

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// MaxDecoded bounds the size of a decoded body, so that a hostile or
// corrupt body cannot exhaust memory.
const MaxDecoded = 512 << 20

// Decode removes the codings listed in a Content-Encoding header value,
// last applied first. An empty or "identity" value returns body unchanged.
func Decode(contentEncoding string, body []byte) ([]byte, error) {
	codings := strings.Split(contentEncoding, ",")
	out := body
	for i := len(codings) - 1; i >= 0; i-- {
		c := strings.ToLower(strings.TrimSpace(codings[i]))
		var err error
		out, err = decodeOne(c, out)
		if err != nil {
			return nil, fmt.Errorf("decode %s body: %w", c, err)
		}
	}
	return out, nil
}

func decodeOne(coding string, body []byte) ([]byte, error) {
	var r io.Reader
	switch coding {
	case "", "identity":
		return body, nil
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	case "deflate":
		// RFC 9110 deflate is zlib-wrapped; some servers send raw deflate.
		if zr, err := zlib.NewReader(bytes.NewReader(body)); err == nil {
			defer zr.Close()
			r = zr
		} else {
			fr := flate.NewReader(bytes.NewReader(body))
			defer fr.Close()
			r = fr
		}
	case "br":
		r = brotli.NewReader(bytes.NewReader(body))
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(body), zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	default:
		return nil, fmt.Errorf("unsupported content coding %q", coding)
	}
	out, err := io.ReadAll(io.LimitReader(r, MaxDecoded+1))
	if err != nil {
		return nil, err
	}
	if len(out) > MaxDecoded {
		return nil, fmt.Errorf("decoded body larger than %d bytes", MaxDecoded)
	}
	return out, nil
}
