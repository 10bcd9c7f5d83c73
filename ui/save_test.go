package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/fixtures/democapture"
	"github.com/tsinspect/tsinspect/store"
	"github.com/tsinspect/tsinspect/timeline"
)

// TestRawSaveFromDisk opens the bundled capture of real Claude Code from a
// file, as 'tsinspect open' does, and saves turn 1's request (s), its
// response (s on a response line) and the whole exchange (S) from the Raw
// tab by key presses: the files hold the recorded bodies byte for byte.
// (A session read from a file keeps only what it decoded; the bodies are
// read back from the capture.)
func TestRawSaveFromDisk(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "demo.db")
	if err := os.WriteFile(path, democapture.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	want := firstTurn(t, path)
	if len(want.ReqBody) == 0 || len(want.Body()) == 0 {
		t.Fatal("the demo's first turn has no bodies")
	}

	saves := filepath.Join(dir, "saves")
	if err := os.Mkdir(saves, 0o700); err != nil {
		t.Fatal(err)
	}
	sim := newSim()
	done := make(chan error, 1)
	go func() {
		done <- Open(context.Background(), path, Options{Screen: sim, Title: "demo.db", SaveDir: saves, Location: time.UTC})
	}()
	waitFor(t, sim, "7 turns", 10*time.Second)
	keys := func(s string) {
		for _, r := range s {
			switch r {
			case '\t':
				sim.InjectKey(tcell.KeyTab, 0, tcell.ModNone)
			case '\n':
				sim.InjectKey(tcell.KeyEnter, 0, tcell.ModNone)
			default:
				sim.InjectKey(tcell.KeyRune, r, tcell.ModNone)
			}
		}
	}
	// From the turn list: not on the Raw tab, s says where it works; on
	// it, s saves the request.
	keys("s")
	waitFor(t, sim, "s and S save the request, response or whole exchange on the Raw tab", 2*time.Second)
	keys("6")
	waitFor(t, sim, "▾ request  POST /v1/messages", 2*time.Second)
	keys("s")
	waitFor(t, sim, "saved the request of #1 to ", 2*time.Second)
	keys("\t")
	keys("s")
	waitFor(t, sim, "saved the request of #1 to ", 2*time.Second)
	keys("/stop_reason\ns")
	waitFor(t, sim, "saved the response of #1 to ", 2*time.Second)
	keys("S")
	waitFor(t, sim, "saved the turn of #1 to ", 2*time.Second)
	sim.InjectKey(tcell.KeyRune, 'q', tcell.ModNone)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	if got, err := os.ReadFile(filepath.Join(saves, "turn-1-request.json")); err != nil || !bytes.Equal(got, want.ReqBody) {
		t.Errorf("request: %d bytes saved, want the recorded %d byte for byte (%v)", len(got), len(want.ReqBody), err)
	}
	if got, err := os.ReadFile(filepath.Join(saves, "turn-1-response.sse")); err != nil || !bytes.Equal(got, want.Body()) {
		t.Errorf("response: %d bytes saved, want the recorded %d byte for byte (%v)", len(got), len(want.Body()), err)
	}
	b, err := os.ReadFile(filepath.Join(saves, "turn-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var whole struct {
		Request struct {
			Body json.RawMessage `json:"body"`
		} `json:"request"`
		Response struct {
			Body string `json:"body"`
		} `json:"response"`
	}
	if err := json.Unmarshal(b, &whole); err != nil {
		t.Fatalf("turn-1.json: %v", err)
	}
	var gotReq, wantReq bytes.Buffer
	if json.Compact(&gotReq, whole.Request.Body) != nil || json.Compact(&wantReq, want.ReqBody) != nil || !bytes.Equal(gotReq.Bytes(), wantReq.Bytes()) {
		t.Errorf("turn-1.json: request body of %d bytes, want the recorded one", len(whole.Request.Body))
	}
	if whole.Response.Body != string(want.Body()) {
		t.Errorf("turn-1.json: response body of %d bytes, want the recorded %d", len(whole.Response.Body), len(want.Body()))
	}
}

// TestRawSaveWithoutBodies: a session whose bodies were dropped and cannot
// be read back (no capture behind it) saves nothing and says so.
func TestRawSaveWithoutBodies(t *testing.T) {
	b := timeline.NewBuilder(false)
	for _, ex := range goldenExchanges() {
		b.Add(&ex)
	}
	dir := t.TempDir()
	h := newHarness(t, b.Session(), 120, 40, Options{Title: "golden", SaveDir: dir})
	h.keys("6\ts")
	if st := h.a.m.Status(); st != "not saved: the bodies of #1 could not be read back from the capture ("+timeline.ErrNoBodies.Error()+")" {
		t.Errorf("status %q", st)
	}
	h.keys("S")
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("%d files written", len(entries))
	}
	if !bytes.Contains([]byte(h.text()), []byte("the bodies could not be read back")) {
		t.Errorf("the Raw tab does not say its bodies are missing:\n%s", h.text())
	}
}

// firstTurn reads the exchange of the capture's first Messages turn.
func firstTurn(t *testing.T, path string) *exchange.Exchange {
	t.Helper()
	db, err := store.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exs, err := db.Exchanges(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s := timeline.Build(exs)
	if len(s.Turns) == 0 {
		t.Fatal("no turns")
	}
	return s.Turns[0].Exchange
}
