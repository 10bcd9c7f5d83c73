package e2e

import (
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/internal/pgtest"
)

// teamSession is what the test reads of a 'sessions --json' row.
type teamSession struct {
	ID      string  `json:"id"`
	Cwd     string  `json:"cwd"`
	Turns   int     `json:"turns"`
	CostUSD float64 `json:"cost_usd"`
}

// readRows reads 'sessions --json' rows.
func readRows(t *testing.T, out string) []teamSession {
	t.Helper()
	var rows []teamSession
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r teamSession
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %q", err, l)
		}
		rows = append(rows, r)
	}
	return rows
}

// TestTeamStore: two people push real sessions to a throwaway
// PostgreSQL with the built binary; 'sessions --from' lists both, with
// the figures 'sessions' gives on their machines; one person's listing
// is theirs; 'advise --from' reads everyone's; a refused login is one
// line without the password.
func TestTeamStore(t *testing.T) {
	kit.Skips.Short(t, "PostgreSQL")
	c := pgtest.Start(t, func(why string) {
		skipFor(t, "PostgreSQL", pgtest.Install, why+"; set TSINSPECT_REQUIRE_POSTGRES=1 to make this a failure")
	})
	url := c.NewDB("e2e")
	public := filepath.Join("..", "source", "testdata", "public")
	dirs := map[string][]string{"ann": {"17-v2.1.101-toolsearch-deferred-delta", "22-v2.1.205-toolsearch-fable"}, "bo": {"27-v2.1.205-toolsearch-keyword-query", "05-v2.0.76-compaction"}}
	var disk []teamSession
	for person, names := range dirs {
		root := t.TempDir()
		for _, n := range names {
			if err := os.CopyFS(filepath.Join(root, n), os.DirFS(filepath.Join(public, n))); err != nil {
				t.Fatal(err)
			}
		}
		code, out, errs := runCLI(t, "push", root, "--to", url, "--person", person, "--machine", "m")
		if code != 0 || !strings.HasPrefix(out, "pushed 2 of 2 sessions") {
			t.Fatalf("push as %s: exit %d, %q %q", person, code, out, errs)
		}
		code, out, errs = runCLI(t, "sessions", root, "--json", "--no-index")
		if code != 0 {
			t.Fatalf("sessions %s: exit %d, %s", root, code, errs)
		}
		disk = append(disk, readRows(t, out)...)
	}
	code, out, errs := runCLI(t, "sessions", "--from", url, "--json")
	if code != 0 {
		t.Fatalf("sessions --from: exit %d, %s", code, errs)
	}
	team := readRows(t, out)
	if len(team) != 4 || len(disk) != 4 {
		t.Fatalf("%d sessions in the store, %d on disk, want 4", len(team), len(disk))
	}
	byID := map[string]teamSession{}
	for _, r := range disk {
		byID[r.ID] = r
	}
	for _, r := range team {
		d := byID[r.ID]
		if r.Turns != d.Turns || math.Abs(r.CostUSD-d.CostUSD) > 1e-9 || !strings.Contains(r.Cwd, " · project-") {
			t.Errorf("%s: the store has %+v, the disk %+v", r.ID, r, d)
		}
	}
	_, out, _ = runCLI(t, "sessions", "--from", url, "--json", "--person", "bo")
	if rows := readRows(t, out); len(rows) != 2 || !strings.HasPrefix(rows[0].Cwd, "bo@m · ") {
		t.Errorf("bo's sessions: %+v", rows)
	}
	code, out, errs = runCLI(t, "advise", "--from", url, "--json", "--min-sessions", "2")
	var adv struct{ Sessions int }
	if code != 0 || json.Unmarshal([]byte(out), &adv) != nil || adv.Sessions != 4 {
		t.Errorf("advise --from: exit %d, %d sessions, %s", code, adv.Sessions, errs)
	}
	serveTeam(t, url)
	bad := c.URL("postgres", "not-the-Pw", "e2e")
	code, out, errs = runCLI(t, "sessions", "--from", bad)
	if code == 0 || out != "" || strings.Count(errs, "\n") != 1 || strings.Contains(errs, "not-the-Pw") || !strings.Contains(errs, "login was refused") {
		t.Errorf("a refused login: exit %d, %q %q", code, out, errs)
	}
}

// serveTeam runs 'serve --from url' on loopback: it prints an address
// with a token, refuses a request without it, and lists the four
// sessions with their people.
func serveTeam(t *testing.T, url string) {
	t.Helper()
	srv := startServe(t, nil, "--from", url, "--listen", "127.0.0.1:0")
	addr, token, printed := srv.url, srv.token, srv.printed
	if token == "" {
		t.Fatalf("serve --from printed no address with a token: %q, %s", printed, srv.stderr.String())
	}
	if !strings.HasPrefix(printed[0], "Serving 4 sessions of the team's store postgres://postgres:xxxxx@") {
		t.Errorf("first line %q", printed[0])
	}
	c := &http.Client{}
	resp, err := c.Get(addr + "api/sessions")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", addr+"api/sessions", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Rows []struct{ Cells []string } `json:"rows"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	people := map[string]int{}
	for _, r := range got.Rows {
		people[strings.SplitN(r.Cells[1], "@", 2)[0]]++
	}
	if len(got.Rows) != 4 || people["ann"] != 2 || people["bo"] != 2 {
		t.Errorf("the team's page lists %+v", got.Rows)
	}
}
