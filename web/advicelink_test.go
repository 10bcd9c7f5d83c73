package web

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// TestAdviceEvidenceLinks: the advice page's evidence, its sessions
// renamed by redaction, links to each session's page at its first turn;
// a session the listing does not hold keeps the command.
func TestAdviceEvidenceLinks(t *testing.T) {
	s := &Server{list: &listing{items: []*item{
		{key: "5ac86603-aaaa", path: "/p/5ac86603-aaaa.jsonl", row: sessionfiles.Row{ID: "5ac86603-aaaa"}},
		{key: "demo.db", path: "/c/demo.db", row: sessionfiles.Row{ID: "demo.db"}},
	}}}
	whole := &advice.Result{MinSessions: 1, Advice: []advice.Advice{{Kind: advice.KindCacheBreaks, Subject: "x", Title: "t", CostUSD: 1,
		Evidence: []advice.Evidence{{Session: "5ac86603-aaaa", Turns: []int{7, 9}}, {Session: "/c/demo.db"}, {Session: "gone"}}}}}
	shown := redact.Advice(whole, redact.Default)
	s.linkEvidence(whole, shown)
	ev := shown.Advice[0].Evidence
	if ev[0].Link != "/s/5ac86603-aaaa/turn/7" || ev[1].Link != "/s/demo.db" || ev[2].Link != "" {
		t.Fatalf("links %q, %q, %q", ev[0].Link, ev[1].Link, ev[2].Link)
	}
	var b bytes.Buffer
	if err := shown.WriteHTMLBody(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if !strings.Contains(page, `<a href="/s/5ac86603-aaaa/turn/7">`) || !strings.Contains(page, "<code>tsinspect open") || strings.Contains(page, "5ac86603-aaaa</a>") {
		t.Errorf("page:\n%s", page)
	}
}
