// Package mitmflow reads mitmproxy's flow dumps (mitmdump -w, the
// mitmproxy UI's "save", cc-trace and the scripts built on them): a
// sequence of tnetstrings, one dictionary per flow. It reads the HTTP flows
// of flow-format versions up to 21 (mitmproxy 12); the request and response
// fields it needs have kept their shape since mitmproxy 7.
//
// A flow keeps headers and bodies as they crossed the wire (bodies still
// content-encoded) and four times: request start and end, response start and
// end, but not when each piece of a streamed response arrived, so a stream
// is given as one chunk at its end. A flow cut short has an "error" (who
// ended it: the client, the server, mitmproxy).
package mitmflow

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/importer/recon"
)

// NewestVersion is the newest flow-format version this package knows
// (mitmproxy 12).
const NewestVersion = 21

// ErrNotFlows is returned for input that does not start with a flow.
var ErrNotFlows = errors.New("not a mitmproxy flow dump")

// Result is what Read found.
type Result struct {
	recon.Result
	// NonHTTP counts flows of other kinds (tcp, udp, dns) left out.
	NonHTTP int
	// Newer counts flows of a format version newer than NewestVersion,
	// read all the same.
	Newer int
}

// Looks reports whether head starts like a flow dump: a tnetstring
// dictionary whose first keys are a flow's.
func Looks(head []byte) bool {
	i := 0
	for i < len(head) && i < 12 && head[i] >= '0' && head[i] <= '9' {
		i++
	}
	if i == 0 || i >= len(head) || head[i] != ':' {
		return false
	}
	h := string(head[i+1 : min(len(head), i+1+4096)])
	return strings.Contains(h, "4:type;") || strings.Contains(h, "4:type,") || strings.Contains(h, "7:version;") ||
		strings.Contains(h, "7:request;") || strings.Contains(h, "11:client_conn;")
}

// Read reads a flow dump. It fails (with an error wrapping ErrNotFlows)
// only when the first flow cannot be read; later damage ends the reading,
// keeping the flows before it, and flows that are not HTTP are counted.
func Read(r io.Reader) (*Result, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	res := &Result{}
	var off int64
	for {
		v, n, err := readValue(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			if res.Records == 0 {
				return nil, fmt.Errorf("mitmflow: %w: %v", ErrNotFlows, err)
			}
			if errors.Is(err, errCut) {
				res.Damage = fmt.Sprintf("the file is cut off in flow %d (after byte %d)", res.Records+1, off)
			} else {
				res.Damage = fmt.Sprintf("flow %d (at byte %d) is not readable: %v", res.Records+1, off, err)
			}
			break
		}
		off += n
		res.Records++
		f, ok := v.(map[string]value)
		if !ok {
			if res.Records == 1 {
				return nil, fmt.Errorf("mitmflow: %w: the first value is not a dictionary", ErrNotFlows)
			}
			res.Skip("flow %d: not a dictionary", res.Records)
			continue
		}
		if res.Records == 1 && f["type"] == nil && f["request"] == nil {
			return nil, fmt.Errorf("mitmflow: %w: the first dictionary is not a flow", ErrNotFlows)
		}
		if t := str(f["type"]); t != "" && t != "http" {
			res.NonHTTP++
			continue
		}
		if ver, _ := f["version"].(int64); ver > NewestVersion {
			res.Newer++
		}
		ex, err := exchangeOf(f)
		if err != nil {
			res.Skip("flow %d: %v", res.Records, err)
			continue
		}
		res.Exchanges = append(res.Exchanges, ex)
	}
	return res, nil
}

// exchangeOf makes the exchange of one HTTP flow.
func exchangeOf(f map[string]value) (exchange.Exchange, error) {
	req, ok := f["request"].(map[string]value)
	if !ok {
		return exchange.Exchange{}, errors.New("no request")
	}
	method := str(req["method"])
	if method == "" {
		return exchange.Exchange{}, errors.New("request without a method")
	}
	p := recon.Parts{
		Source:     exchange.SourceMitmproxy,
		Start:      recon.UnixSeconds(num(req["timestamp_start"])),
		Method:     method,
		URL:        requestURL(req),
		ReqHeaders: headers(req["headers"]),
		ReqBody:    bytesOf(req["content"]),
	}
	if p.Start.IsZero() {
		p.Start = recon.UnixSeconds(num(f["timestamp_created"]))
	}
	if resp, ok := f["response"].(map[string]value); ok {
		code, _ := resp["status_code"].(int64)
		p.Status = int(code)
		p.FirstByte = recon.UnixSeconds(num(resp["timestamp_start"]))
		p.End = recon.UnixSeconds(num(resp["timestamp_end"]))
		p.RespHeaders = headers(resp["headers"])
		if resp["content"] == nil {
			p.Error = "mitmproxy streamed the body without keeping it (stream_large_bodies)"
			p.State = exchange.StateComplete
		}
		p.RespBody = bytesOf(resp["content"])
		if p.End.IsZero() {
			p.End = p.FirstByte
		}
	} else {
		p.End = recon.UnixSeconds(num(req["timestamp_end"]))
	}
	if e, ok := f["error"].(map[string]value); ok {
		msg := str(e["msg"])
		if msg == "" {
			msg = "the flow has an error"
		}
		p.Error = "mitmproxy: " + msg
		p.State = errorState(msg)
		if t := recon.UnixSeconds(num(e["timestamp"])); !t.IsZero() && t.After(p.End) {
			p.End = t
		}
	}
	return recon.Exchange(p), nil
}

// errorState tells from mitmproxy's error message who ended the flow.
func errorState(msg string) exchange.State {
	m := strings.ToLower(msg)
	if strings.Contains(m, "client disconnected") || strings.Contains(m, "client closed") {
		return exchange.StateClientAborted
	}
	return exchange.StateUpstreamFailed
}

func requestURL(req map[string]value) string {
	scheme := str(req["scheme"])
	if scheme == "" {
		scheme = "https"
	}
	authority := str(req["authority"])
	if authority == "" {
		authority = str(req["host"])
		port, _ := req["port"].(int64)
		if port != 0 && !(scheme == "https" && port == 443) && !(scheme == "http" && port == 80) {
			if strings.Contains(authority, ":") {
				authority = "[" + authority + "]"
			}
			authority += ":" + strconv.FormatInt(port, 10)
		}
	}
	return scheme + "://" + authority + str(req["path"])
}

func headers(v value) []exchange.Header {
	list, _ := v.([]value)
	out := make([]exchange.Header, 0, len(list))
	for _, h := range list {
		kv, ok := h.([]value)
		if !ok || len(kv) != 2 {
			continue
		}
		out = append(out, exchange.Header{Name: str(kv[0]), Value: str(kv[1])})
	}
	return out
}

func str(v value) string {
	b, _ := v.([]byte)
	return string(b)
}

func bytesOf(v value) []byte {
	b, _ := v.([]byte)
	if b == nil {
		return []byte{}
	}
	return b
}

func num(v value) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	}
	return 0
}
