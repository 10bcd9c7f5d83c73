package decode

import (
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
)

// TestUsagePricingFields: what a response's price depends on besides its
// tokens, fast mode and web searches, comes out of the usage object, and a
// wrong type is a problem, not a silent zero.
func TestUsagePricingFields(t *testing.T) {
	ex := func(usage string) *exchange.Exchange {
		return &exchange.Exchange{Method: "POST", URL: "https://api.anthropic.com/v1/messages",
			ReqBody: []byte(`{"model":"claude-opus-4-6","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`),
			Status:  200, State: exchange.StateComplete,
			RespBody: []byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-6","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":` + usage + `}`)}
	}
	turn := Decode(ex(`{"input_tokens":3,"output_tokens":5,"speed":"fast","server_tool_use":{"web_search_requests":3,"web_fetch_requests":1}}`))
	noProblems(t, "fast", turn)
	if u := turn.Response.Usage; u.Speed != "fast" || u.WebSearchRequests != 3 || u.InputTokens != 3 {
		t.Errorf("usage %+v", u)
	}
	turn = Decode(ex(`{"input_tokens":3,"output_tokens":5}`))
	if u := turn.Response.Usage; u.Speed != "" || u.WebSearchRequests != 0 {
		t.Errorf("plain usage %+v", u)
	}
	turn = Decode(ex(`{"input_tokens":3,"output_tokens":5,"speed":1,"server_tool_use":{"web_search_requests":"x"}}`))
	if len(turn.Problems) != 2 {
		t.Errorf("problems %v, want two", turn.Problems)
	}
}
