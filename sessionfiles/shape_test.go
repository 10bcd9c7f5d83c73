package sessionfiles

import (
	"bytes"
	"encoding/json"
	"maps"
	"testing"
)

// decodeShape is what readShape must agree with on a valid record: the
// record decoded whole.
func decodeShape(line []byte) (string, *sumShape, bool) {
	var r struct {
		ShapeHash string `json:"shapeHash"`
		Shape     struct {
			Tools []struct {
				Name  string `json:"name"`
				Defer bool   `json:"defer_loading"`
			} `json:"tools"`
		} `json:"shape"`
	}
	if json.Unmarshal(line, &r) != nil {
		return "", nil, false
	}
	sh := &sumShape{inline: map[string]bool{}, deferred: map[string]bool{}}
	for _, t := range r.Shape.Tools {
		if t.Defer {
			sh.deferred[t.Name] = true
		} else {
			sh.inline[t.Name] = true
		}
	}
	return r.ShapeHash, sh, true
}

func TestReadShapeAgreesWithDecoding(t *testing.T) {
	for _, line := range []string{
		`{"type":"api-request-shape","shapeHash":"h1","shape":{"system":[{"type":"text","text":"say \"tools\":[ and \\\"name\":\"x\" {["}],"tools":[{"name":"Read","input_schema":{"type":"object","properties":{"name":{"type":"string","default":"n"},"tools":[1,2]}}},{"name":"mcp__a__b","defer_loading":true,"description":"}]\\"},{"name":"C","defer_loading":false}]}}`,
		`{ "type" : "api-request-shape" , "shapeHash" : "h2" , "shape" : { "tools" : [ { "defer_loading" : true , "name" : "D\u0041" } , { "name" : "E" } ] } }`,
		`{"type":"api-request-shape","shapeHash":"h3","shape":{"system":"x","tools":null}}`,
		`{"type":"api-request-shape","shapeHash":"h4","shape":{"tools":[]},"extra":[{"a":[-1.5e3,true,null]}]}`,
		`{"type":"api-request-shape","shape":{"tools":[{"name":"F","defer_loading":true}]},"shapeHash":"h5"}`,
	} {
		wh, ws, wok := decodeShape([]byte(line))
		gh, gs, gok := readShape([]byte(line))
		if !wok {
			t.Fatalf("bad test line %s", line)
		}
		if gh != wh || gok != wok || !maps.Equal(gs.inline, ws.inline) || !maps.Equal(gs.deferred, ws.deferred) {
			t.Errorf("%s:\nread %q %v %v %v\nwant %q %v %v %v", line, gh, gok, gs.inline, gs.deferred, wh, wok, ws.inline, ws.deferred)
		}
	}
	for _, line := range []string{
		`{"type":"api-request-shape","shapeHash":"s","shape":{"system":"x","tools":{}}}`,
		`{"type":"api-request-shape","shapeHash":"s","shape":{"tools":[{"name":"A"`,
		`{"type":"api-request-shape","shapeHash":"s","shape":{"tools":["A"]}}`,
	} {
		if _, _, ok := readShape([]byte(line)); ok {
			t.Errorf("read %s", line)
		}
	}
}

// FuzzReadShape checks readShape against decoding on every valid record.
func FuzzReadShape(f *testing.F) {
	f.Add([]byte(`{"type":"api-request-shape","shapeHash":"h","shape":{"tools":[{"name":"A","defer_loading":true},{"name":"B"}]}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		gh, gs, gok := readShape(line)
		wh, ws, wok := decodeShape(line)
		if !wok || caseFolded(line) {
			return
		}
		if !gok || gh != wh || !maps.Equal(gs.inline, ws.inline) || !maps.Equal(gs.deferred, ws.deferred) {
			t.Fatalf("%s: read %q %v %v %v, want %q %v %v", line, gh, gok, gs.inline, gs.deferred, wh, ws.inline, ws.deferred)
		}
	})
}

// caseFolded reports whether line spells a key readShape reads in another
// case, which the decoder takes and Claude Code never writes.
func caseFolded(line []byte) bool {
	lower := bytes.ToLower(line)
	for _, k := range []string{`"shapehash"`, `"shape"`, `"tools"`, `"name"`, `"defer_loading"`} {
		if bytes.Count(lower, []byte(k)) != bytes.Count(line, []byte(k)) {
			return true
		}
	}
	return false
}
