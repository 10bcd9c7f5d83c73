package team

import (
	"context"
	"testing"

	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/redact"
)

// TestPushRedacts pushes the same sessions under each policy, as three
// machines: by default no path reaches the store and the project is a
// stable pseudonym, strict also replaces the session ID by one and leaves
// queries out, off sends the working directory.
func TestPushRedacts(t *testing.T) {
	c := startCluster(t)
	url := c.NewDB("redacts")
	root := copySessions(t, "gil", "17-v2.1.101-toolsearch-deferred-delta", "27-v2.1.205-toolsearch-keyword-query", "05-v2.0.76-compaction")
	for _, p := range redact.Policies() {
		if _, err := Push(context.Background(), PushOptions{URL: url, Person: "gil", Machine: string(p), Roots: []string{root}, Prices: pricing.Default(), Policy: p}); err != nil {
			t.Fatal(err)
		}
	}
	leaks := `SELECT count(*) FROM sessions s WHERE machine = $1 AND (s.summary::text ~ '/(home|Users|tmp)/' OR s.facts::text ~ '/(home|Users|tmp)/'
		OR s.project ~ '/' OR EXISTS (SELECT 1 FROM searches q WHERE q.session_id = s.session_id AND q.machine = s.machine AND q.query ~ '/(home|Users|tmp)/'))`
	for _, p := range []redact.Policy{redact.Default, redact.Strict} {
		if n := count(t, url, leaks, string(p)); n != 0 {
			t.Errorf("%s: %d sessions with a path in the store", p, n)
		}
	}
	if n := count(t, url, leaks, string(redact.Off)); n != 3 {
		t.Errorf("off: %d sessions with their working directory, want 3", n)
	}
	if n := count(t, url, `SELECT count(*) FROM sessions WHERE machine = 'strict' AND project LIKE 'project-%' AND session_id LIKE 's-%'`); n != 3 {
		t.Errorf("strict: %d sessions with pseudonyms, want 3", n)
	}
	if n := count(t, url, `SELECT count(*) FROM sessions WHERE machine = 'default' AND project LIKE 'project-%' AND session_id NOT LIKE 's-%'`); n != 3 {
		t.Errorf("default: %d sessions with the project's pseudonym and their own ID, want 3", n)
	}
	if n := count(t, url, `SELECT count(*) FROM sessions a JOIN sessions b USING (session_id, project) WHERE a.machine = 'default' AND b.machine = 'strict'`); n != 0 {
		t.Errorf("default and strict: %d sessions alike, want their IDs to differ", n)
	}
	if n := count(t, url, `SELECT count(*) FROM searches WHERE machine = 'strict' AND query <> ''`); n != 0 {
		t.Errorf("strict: %d searches with their query", n)
	}
	if n := count(t, url, `SELECT count(*) FROM searches WHERE machine = 'default' AND query <> ''`); n == 0 {
		t.Error("default: no search kept its query")
	}
	// The pseudonyms are stable: the same session on another machine
	// under strict has the same ones.
	if _, err := Push(context.Background(), PushOptions{URL: url, Person: "gil", Machine: "strict2", Roots: []string{root}, Prices: pricing.Default(), Policy: redact.Strict}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, url, `SELECT count(*) FROM sessions a JOIN sessions b USING (session_id, project) WHERE a.machine = 'strict' AND b.machine = 'strict2'`); n != 3 {
		t.Errorf("strict pseudonyms: %d of 3 sessions the same on two machines", n)
	}
}
