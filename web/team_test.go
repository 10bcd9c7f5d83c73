package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/web"
)

// TestTeamStore serves a team's store (a stand-in for the one 'serve
// --from' reads): the sessions page lists its sessions with their
// person, picks up one pushed since, and a session's page says its turns
// are on its person's machine.
func TestTeamStore(t *testing.T) {
	at := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	sums := []*sessionfiles.Summary{
		{ID: "aaaa1111", Cwd: "ann@laptop · repo", Start: at, End: at.Add(time.Hour), Turns: 2, Models: []string{"claude-sonnet-4-5"},
			Usage: []sessionfiles.TurnUsage{{Model: "claude-sonnet-4-5", Input: 100_000, At: at}, {Model: "claude-sonnet-4-5", Output: 100_000, At: at}}},
	}
	team := fakeTeam(func() []*sessionfiles.Summary {
		mu.Lock()
		defer mu.Unlock()
		return append([]*sessionfiles.Summary(nil), sums...)
	})
	s := serve(t, web.Options{Team: team, Policy: redact.Default})
	var got sessionsJSON
	getJSON(t, s, "/api/sessions", &got)
	// $3 per million input tokens and $15 per million output at list
	// prices: $0.30 + $1.50.
	if len(got.Rows) != 1 || got.Rows[0].Cells[1] != "ann@laptop · repo" || got.Rows[0].Cells[8] != "$1.80" {
		t.Fatalf("rows %+v, want ann's session at $1.80", got.Rows)
	}
	mu.Lock()
	sums = append(sums, &sessionfiles.Summary{ID: "bbbb2222", Cwd: "bo@desk · repo", Start: at, End: at.Add(2 * time.Hour), Turns: 1})
	mu.Unlock()
	code, body, _ := get(t, s, "GET", "/s/bbbb2222", "")
	if code != http.StatusNotFound || !strings.Contains(body, "tsinspect open bbbb2222") {
		t.Fatalf("a team session's page: %d %s", code, body)
	}
	getJSON(t, s, "/api/sessions?project=bo@", &got)
	if len(got.Rows) != 1 || got.Rows[0].Key != "bbbb2222" {
		t.Fatalf("filtered by person: %+v", got.Rows)
	}
}

// fakeTeam is a team's store of the summaries its function gives, with
// no advice facts.
type fakeTeam func() []*sessionfiles.Summary

func (f fakeTeam) Summaries(context.Context) ([]*sessionfiles.Summary, error) { return f(), nil }
func (f fakeTeam) Stamp(context.Context) (string, error)                      { return fmt.Sprint(len(f())), nil }
func (f fakeTeam) Facts(context.Context) ([]*advice.Facts, error)             { return nil, nil }
