package redact_test

import (
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/redact"
)

func adviceResult() *advice.Result {
	return &advice.Result{Sessions: 3, MinSessions: 3,
		Notes: []string{"read from /home/alice/work"},
		Advice: []advice.Advice{{Kind: advice.KindNeverUsed, Subject: "mcp__acme (2 of 3 tools)",
			Title: "Drop the acme MCP server where you do not use it", Why: "3 sessions announced mcp__acme__deploy; none was called.",
			Do: "Remove \"acme\" (claude mcp remove acme).", Figures: []string{"queries: \"deploy to alice@example.com\""},
			Evidence: []advice.Evidence{
				{Session: "5f0c4a8e-2b7d-4c1e-9a3f-6d8b1e2c7a90", Open: "5f0c4a8e", Project: "-home-alice-secret-project", Turns: []int{3}, Note: "/home/alice/secret"},
				{Session: "0a65ef85-0000-4000-8000-000000000000", Open: "0a65ef85", Project: "-home-alice-other"},
			}}},
		LeftOut: []advice.LeftOut{{Kind: advice.KindBlindCalls, Subject: "mcp__acme__deploy", Sessions: 1, Reason: "rests on 1 session, fewer than 3"}},
	}
}

// TestAdviceRedacted: shared advice names no session, project, path or
// e-mail address; under strict, no MCP server either; off leaves it be.
func TestAdviceRedacted(t *testing.T) {
	for _, p := range []redact.Policy{redact.Default, redact.Strict} {
		r := redact.Advice(adviceResult(), p)
		var b strings.Builder
		if err := r.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, private := range []string{"5f0c4a8e", "0a65ef85", "alice", "secret", "example.com"} {
			if strings.Contains(out, private) {
				t.Errorf("%s: %q left in:\n%s", p, private, out)
			}
		}
		if e := r.Advice[0].Evidence; e[0].Session != "[session-1]" || e[0].Open != e[0].Session || e[1].Session != "[session-2]" || len(e[0].Turns) != 1 {
			t.Errorf("%s: evidence %+v: want pseudonyms, the turns kept", p, e)
		}
		if p == redact.Strict && r.Advice[0].Subject != "mcp__s1 (2 of 3 tools)" {
			t.Errorf("strict: subject %q", r.Advice[0].Subject)
		}
		if strings.Contains(out, "acme") != (p == redact.Default) {
			t.Errorf("%s: server name acme kept %v:\n%s", p, strings.Contains(out, "acme"), out)
		}
	}
	if r := adviceResult(); redact.Advice(r, redact.Off) != r {
		t.Error("off changed the advice")
	}
}

// Issue 42, item 1: strict redaction pseudonymised an MCP server name only
// up to its first - or . (acme-billing-prod became s1-billing-prod). Names
// with -, . and _ are now replaced whole, wherever the advice names them.
func TestStrictAdviceServerNamesWhole(t *testing.T) {
	for _, name := range []string{"acme-billing-prod", "acme.billing.prod", "acme_billing_prod", "acme-billing_prod.v2"} {
		r := &advice.Result{Sessions: 3, MinSessions: 3,
			Advice: []advice.Advice{{Kind: advice.KindNeverUsed, Subject: "mcp__" + name + " (2 of 3 tools)",
				Title: "Drop the " + name + " MCP server where you do not use it", Why: "3 sessions announced mcp__" + name + "__deploy; none was called.",
				Do: "Remove \"" + name + "\" (claude mcp remove " + name + ").", Figures: []string{"mcp__" + name + "__deploy: 3 sessions"}}},
			LeftOut: []advice.LeftOut{{Kind: advice.KindBlindCalls, Subject: "mcp__" + name + "__deploy", Sessions: 1, Reason: "rests on 1 session"}},
		}
		var b strings.Builder
		if err := redact.Advice(r, redact.Strict).WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, part := range []string{"billing", "prod", "acme"} {
			if strings.Contains(out, part) {
				t.Errorf("%s: %q left in:\n%s", name, part, out)
			}
		}
		if !strings.Contains(out, `mcp__s1 (2 of 3 tools)`) || !strings.Contains(out, `mcp__s1__deploy`) {
			t.Errorf("%s: the server is not s1 whole:\n%s", name, out)
		}
	}
}
