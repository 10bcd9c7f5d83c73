package pricing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// Bounds of what a price file may hold: every figure finite, not
// negative, and at most its bound, so that no total of any session can
// overflow to Inf or become NaN. The bounds are far above any published
// price (Claude's dearest output rate is $75 per million tokens).
const (
	// maxRate bounds a rate, in US dollars per million tokens.
	maxRate = 1e5
	// maxFast bounds the fast-mode multiplier.
	maxFast = 100
	// maxBatch bounds the batch factor (a discount: at most 1).
	maxBatch = 1
	// maxWebSearch bounds the price of 1,000 web searches, in US dollars.
	maxWebSearch = 1e5
)

// checkFigure says what is wrong with the figure v called what, bounded
// by limit: nil when it is finite, not negative and at most limit.
func checkFigure(what string, v, limit float64) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("%s: %v is not a number", what, v)
	case v < 0:
		return fmt.Errorf("%s: negative (%g)", what, v)
	case v > limit:
		return fmt.Errorf("%s: %g is more than %g, the most a price file may hold", what, v, limit)
	}
	return nil
}

// checkRates checks each rate of r (US dollars per million tokens).
func checkRates(r Rates) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"input", r.Input}, {"output", r.Output}, {"cache_write_5m", r.CacheWrite5m}, {"cache_write_1h", r.CacheWrite1h}, {"cache_read", r.CacheRead}} {
		if err := checkFigure(f.name, f.v, maxRate); err != nil {
			return err
		}
	}
	return nil
}

// checkModel checks every figure of one model's entry.
func checkModel(m Model) error {
	if err := checkFigure("fast-mode multiplier", m.Fast, maxFast); err != nil {
		return err
	}
	if err := checkRates(m.Rates); err != nil {
		return err
	}
	if m.LongContext != nil {
		if m.LongContext.AboveInputTokens < 0 {
			return errors.New("long_context.above_input_tokens: negative")
		}
		if err := checkRates(m.LongContext.Rates); err != nil {
			return fmt.Errorf("long_context: %w", err)
		}
	}
	return nil
}

// finite is v, or 0 and false when v is NaN or infinite: the last guard,
// so that no output ever shows one.
func finite(v float64) (float64, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// member is one member of a JSON object, with the line its key is on.
type member struct {
	key  string
	line int
	raw  json.RawMessage
	// at is the offset of its value in the whole document.
	at int
}

// lineAt is the line (from 1) of offset off in doc.
func lineAt(doc []byte, off int) int {
	return 1 + bytes.Count(doc[:min(off, len(doc))], []byte{'\n'})
}

// skipSpace returns the offset of the first byte at or after off that is
// neither white space nor one of extra.
func skipSpace(doc []byte, off int, extra string) int {
	for off < len(doc) && (bytes.IndexByte([]byte(" \t\r\n"+extra), doc[off]) >= 0) {
		off++
	}
	return off
}

// objectMembers returns, in their order, the members of the JSON object
// that starts at doc[at:], each with its line (a key given twice is there
// twice).
func objectMembers(doc []byte, at int) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(doc[at:]))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for dec.More() {
		keyAt := skipSpace(doc, at+int(dec.InputOffset()), ",")
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		valAt := skipSpace(doc, at+int(dec.InputOffset()), ":")
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		out = append(out, member{key: key, line: lineAt(doc, keyAt), raw: raw, at: valAt})
	}
	return out, nil
}

// arrayLines returns the line each element of the JSON array at doc[at:]
// starts on.
func arrayLines(doc []byte, at int) ([]int, error) {
	dec := json.NewDecoder(bytes.NewReader(doc[at:]))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, errors.New("not a JSON array")
	}
	var out []int
	for dec.More() {
		out = append(out, lineAt(doc, skipSpace(doc, at+int(dec.InputOffset()), ",")))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
	}
	return out, nil
}
