package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/numfmt"
)

// save writes part of the selected turn's exchange to a file in the save
// directory and says where in the status line: the request body (part
// "request"), the response body as received, decoded ("response"), or the
// whole exchange as one JSON object ("turn"). The bodies are those the Raw
// tab shows: a session read from a capture keeps only what it decoded, so
// they are read back from the capture; when that fails, the status line
// says so and nothing is written. Credential headers are in the capture
// as fingerprints only, so none is written.
func (a *app) save(part string) {
	t := a.m.Selected()
	if t == nil || t.Exchange == nil {
		a.m.SetStatus("nothing to save")
		return
	}
	ex, err := t.Load()
	if err != nil {
		a.m.SetStatus(fmt.Sprintf("not saved: the bodies of #%d could not be read back from the capture (%v)", t.Index, err))
		return
	}
	var name string
	var body []byte
	switch part {
	case "request":
		name, body = fmt.Sprintf("turn-%d-request.json", t.Index), ex.ReqBody
	case "response":
		body = responseBody(ex)
		ext := ".json"
		if strings.Contains(ex.RespHeader("Content-Type"), "event-stream") {
			ext = ".sse"
		}
		name = fmt.Sprintf("turn-%d-response%s", t.Index, ext)
	default:
		b, err := exchangeJSON(ex)
		if err != nil {
			a.m.SetStatus("save: " + err.Error())
			return
		}
		name, body = fmt.Sprintf("turn-%d.json", t.Index), b
	}
	path := filepath.Join(a.saveDir, name)
	if err := os.WriteFile(path, body, 0o600); err != nil {
		a.m.SetStatus("save: " + err.Error())
		return
	}
	a.m.SetStatus(fmt.Sprintf("saved the %s of #%d to %s (%s)", part, t.Index, path, numfmt.Bytes(int64(len(body)))))
}

// responseBody is the response body, decoded when it was compressed.
func responseBody(ex *exchange.Exchange) []byte {
	if ex.RespBodyDecoded != nil {
		return ex.RespBodyDecoded
	}
	return ex.RespBody
}

// exchangeJSON is the whole exchange as one JSON object: bodies that are
// JSON are kept as JSON, others as strings.
func exchangeJSON(ex *exchange.Exchange) ([]byte, error) {
	body := func(b []byte) any {
		if json.Valid(b) {
			return json.RawMessage(b)
		}
		return string(b)
	}
	headers := func(hs []exchange.Header) [][2]string {
		out := [][2]string{}
		for _, h := range hs {
			out = append(out, [2]string{h.Name, h.Value})
		}
		return out
	}
	v := map[string]any{
		"request":  map[string]any{"method": ex.Method, "url": ex.URL, "headers": headers(ex.ReqHeaders), "body": body(ex.ReqBody)},
		"response": map[string]any{"status": ex.Status, "headers": headers(ex.RespHeaders), "body": body(responseBody(ex))},
		"start":    ex.Start, "end": ex.End, "state": ex.State,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return buf.Bytes(), nil
}
