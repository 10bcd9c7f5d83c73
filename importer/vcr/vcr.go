// Package vcr reads the cassettes HTTP record-and-replay libraries write
// for test suites: vcrpy and pytest-recording (YAML; bodies as text, as
// !!binary base64, or, with a custom serializer such as pydantic-ai's, as
// "parsed_body" YAML), Ruby VCR (YAML or JSON "http_interactions"; binary
// bodies tagged !binary or given as base64_string) and go-vcr (cassette
// format 1, written by go-vcr v1 and v2, and format 2, by go-vcr v3 and v4).
//
// Cassettes keep no time of day for an interaction (Ruby VCR keeps one
// recorded_at, go-vcr a duration), so interactions are placed one second
// apart from a base time, in file order. Bodies written as parsed YAML are
// re-serialised as JSON. Recorders usually filter credentials; any left
// are fingerprinted.
//
// This package is the only one that uses the YAML library.
package vcr

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/importer/recon"
)

// Flavors of cassette Read tells apart.
const (
	FlavorVCRPy  = "vcrpy"
	FlavorRuby   = "Ruby VCR"
	FlavorGoVCR1 = "go-vcr format 1"
	FlavorGoVCR2 = "go-vcr format 2"
)

// ErrNotCassette is returned for input that is not a cassette.
var ErrNotCassette = errors.New("not a VCR cassette")

// Result is what Read found.
type Result struct {
	recon.Result
	// Flavor is the library that wrote the cassette.
	Flavor string
}

// Looks reports whether head starts like a cassette.
func Looks(head []byte) bool {
	return bytes.Contains(head, []byte("http_interactions")) ||
		bytes.HasPrefix(head, []byte("interactions:")) || bytes.Contains(head, []byte("\ninteractions:"))
}

// Read reads a cassette, placing interactions without a time from base on.
// It fails (with an error wrapping ErrNotCassette) when r is not a YAML or
// JSON document with an interactions list; interactions that cannot be
// read are counted and skipped.
func Read(r io.Reader, base time.Time) (*Result, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("vcr: %w", err)
	}
	var doc yaml.Node
	damage := ""
	if err := yaml.Unmarshal(b, &doc); err != nil {
		good, ok := salvage(b)
		if !ok {
			return nil, fmt.Errorf("vcr: %w: %v", ErrNotCassette, err)
		}
		doc = good
		damage = "the cassette breaks after the interactions kept: " + err.Error()
	}
	c := &converter{}
	top, ok := c.value(&doc, 0).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("vcr: %w: not a mapping", ErrNotCassette)
	}
	if c.over {
		return nil, fmt.Errorf("vcr: %w: more than %d YAML values (aliases expanding without end?)", ErrNotCassette, maxNodes)
	}
	res := &Result{}
	res.Damage = damage
	list, ruby := top["http_interactions"].([]any)
	switch {
	case ruby:
		res.Flavor = FlavorRuby
	default:
		if list, ok = top["interactions"].([]any); !ok {
			return nil, fmt.Errorf("vcr: %w: no interactions list", ErrNotCassette)
		}
		res.Flavor = FlavorVCRPy
		if v := fmt.Sprint(top["version"]); len(list) > 0 && isGoVCR(list[0]) {
			res.Flavor = FlavorGoVCR1
			if v == "2" {
				res.Flavor = FlavorGoVCR2
			}
		}
	}
	if base.IsZero() {
		base = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	for i, it := range list {
		res.Records++
		m, ok := it.(map[string]any)
		if !ok {
			res.Skip("interaction %d: not a mapping", i+1)
			continue
		}
		ex, err := exchangeOf(m, base.Add(time.Duration(i)*time.Second))
		if err != nil {
			res.Skip("interaction %d: %v", i+1, err)
			continue
		}
		res.Exchanges = append(res.Exchanges, ex)
	}
	return res, nil
}

// maxSalvage bounds how many cut points salvage tries.
const maxSalvage = 8

// salvage parses the part of a damaged cassette before the last
// interactions that parse: it cuts the text before an interaction's start
// (a "- " item at the start of a line, as all the libraries write their
// lists) from the end backwards, and returns the first prefix that parses.
func salvage(b []byte) (yaml.Node, bool) {
	var cuts []int
	for i := 0; i+2 < len(b); i++ {
		if (i == 0 || b[i-1] == '\n') && b[i] == '-' && b[i+1] == ' ' {
			cuts = append(cuts, i)
		}
	}
	for k := len(cuts) - 1; k >= 1 && k >= len(cuts)-maxSalvage; k-- {
		var doc yaml.Node
		if yaml.Unmarshal(b[:cuts[k]], &doc) == nil {
			return doc, true
		}
	}
	return yaml.Node{}, false
}

// isGoVCR reports whether an interaction is go-vcr's: its request has a
// "url" (vcrpy and Ruby VCR write "uri").
func isGoVCR(it any) bool {
	m, _ := it.(map[string]any)
	req, _ := m["request"].(map[string]any)
	_, ok := req["url"]
	return ok
}

func exchangeOf(m map[string]any, at time.Time) (exchange.Exchange, error) {
	req, ok := m["request"].(map[string]any)
	if !ok {
		return exchange.Exchange{}, errors.New("no request")
	}
	u := str(req["uri"])
	if u == "" {
		u = str(req["url"])
	}
	if u == "" {
		return exchange.Exchange{}, errors.New("request without a URI")
	}
	if t := parseRubyTime(str(m["recorded_at"])); !t.IsZero() {
		at = t
	}
	p := recon.Parts{
		Source:     exchange.SourceVCR,
		Start:      at,
		End:        at,
		Method:     strings.ToUpper(str(req["method"])),
		URL:        u,
		ReqHeaders: headers(req["headers"]),
	}
	var err error
	if p.ReqBody, err = body(req); err != nil {
		return exchange.Exchange{}, fmt.Errorf("request body: %w", err)
	}
	resp, ok := m["response"].(map[string]any)
	if !ok {
		p.Error = "no response in the cassette"
		return recon.Exchange(p), nil
	}
	p.Status = status(resp)
	p.RespHeaders = headers(resp["headers"])
	if p.RespBody, err = body(resp); err != nil {
		return exchange.Exchange{}, fmt.Errorf("response body: %w", err)
	}
	if d := duration(resp["duration"]); d > 0 {
		p.End = at.Add(d)
	}
	if p.Status == 0 {
		p.Error = "no status in the cassette"
	}
	return recon.Exchange(p), nil
}

// body finds the body of a request or response, whichever way the
// cassette wrote it.
func body(m map[string]any) ([]byte, error) {
	if pb, ok := m["parsed_body"]; ok {
		return json.Marshal(jsonable(pb))
	}
	switch b := m["body"].(type) {
	case nil:
		return []byte{}, nil
	case string:
		return []byte(b), nil
	case []byte:
		return b, nil
	case map[string]any:
		if s, ok := b["base64_string"].(string); ok {
			return decode64(s)
		}
		switch s := b["string"].(type) {
		case string:
			return []byte(s), nil
		case []byte:
			return s, nil
		case nil:
			return []byte{}, nil
		}
		return nil, errors.New("body.string is not a string")
	}
	return nil, fmt.Errorf("body of type %T", m["body"])
}

// status reads {code, message} (vcrpy, Ruby VCR) or code / "200 OK"
// (go-vcr).
func status(resp map[string]any) int {
	if s, ok := resp["status"].(map[string]any); ok {
		return toInt(s["code"])
	}
	if c := toInt(resp["code"]); c != 0 {
		return c
	}
	f := strings.Fields(str(resp["status"]))
	if len(f) > 0 {
		n, _ := strconv.Atoi(f[0])
		return n
	}
	return 0
}

func headers(v any) []exchange.Header {
	m, _ := v.(map[string]any)
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []exchange.Header
	for _, k := range names {
		switch vs := m[k].(type) {
		case []any:
			for _, x := range vs {
				out = append(out, exchange.Header{Name: k, Value: str(x)})
			}
		default:
			out = append(out, exchange.Header{Name: k, Value: str(vs)})
		}
	}
	return out
}

func duration(v any) time.Duration {
	switch d := v.(type) {
	case string:
		x, _ := time.ParseDuration(d)
		return x
	case int:
		return time.Duration(d)
	case float64:
		return time.Duration(d * float64(time.Second))
	}
	return 0
}

func parseRubyTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	if t, err := time.Parse(time.RFC1123, s); err == nil {
		return t.UTC()
	}
	return recon.ParseTime(s)
}

func decode64(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, s)
	return base64.StdEncoding.DecodeString(s)
}

func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

func toInt(v any) int {
	switch x := v.(type) {
	case int:
		return x
	case float64:
		return int(x)
	case string:
		n, _ := strconv.Atoi(x)
		return n
	}
	return 0
}

// jsonable makes a value decoded from YAML marshalable as JSON: binary
// becomes its text.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonable(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e)
		}
		return out
	case []byte:
		return string(x)
	}
	return v
}

// maxDepth bounds the nesting value follows (aliases can make a cycle),
// and maxNodes the values it makes (aliases can multiply them).
const (
	maxDepth = 200
	maxNodes = 2_000_000
)

// converter turns YAML nodes into plain values, counting them.
type converter struct {
	n    int
	over bool
}

// value converts a YAML node into map[string]any, []any, string, []byte
// (for !!binary and Ruby's !binary), int, float64, bool or nil.
func (c *converter) value(n *yaml.Node, depth int) any {
	c.n++
	if c.n > maxNodes {
		c.over = true
	}
	if n == nil || depth > maxDepth || c.over {
		return nil
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return c.value(n.Content[0], depth+1)
	case yaml.AliasNode:
		return c.value(n.Alias, depth+1)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			m[k.Value] = c.value(n.Content[i+1], depth+1)
		}
		return m
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			out = append(out, c.value(e, depth+1))
		}
		return out
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!binary", "!binary", "tag:yaml.org,2002:binary":
			if b, err := decode64(n.Value); err == nil {
				return b
			}
			return n.Value
		case "!!str", "!":
			return n.Value
		case "!!null":
			return nil
		case "!!bool":
			b, _ := strconv.ParseBool(n.Value)
			return b
		case "!!int":
			if i, err := strconv.Atoi(n.Value); err == nil {
				return i
			}
			return n.Value
		case "!!float":
			if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
				return f
			}
			return n.Value
		}
		var v any
		if n.Decode(&v) == nil {
			switch x := v.(type) {
			case string, int, float64, bool, nil:
				return x
			}
		}
		return n.Value
	}
	return nil
}
