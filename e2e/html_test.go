package e2e

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tsinspect/tsinspect/fixtures/democapture"
)

// Screenshot size, as a reader's window would be.
const shotW, shotH = 1200, 1600

// findChromium returns the headless browser to open reports with, skipping
// the test when there is none, or failing it when
// TSINSPECT_REQUIRE_CHROMIUM is set (as CI does).
func findChromium(t *testing.T) string {
	t.Helper()
	kit.Skips.Short(t, "Chromium")
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("TSINSPECT_REQUIRE_CHROMIUM") != "" {
		t.Fatal("chromium not found: install Debian's chromium package (apt-get install -y chromium)")
	}
	skipFor(t, "Chromium", installChromium, "chromium not installed (apt-get install -y chromium); set TSINSPECT_REQUIRE_CHROMIUM=1 to make this a failure")
	return ""
}

// browse opens page in headless Chromium, takes a screenshot and returns
// it with what the browser logged.
func browse(t *testing.T, chromium, page string) (shot []byte, log string) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--screenshot="+out,
		"--window-size=1200,1600", "--enable-logging=stderr", "--v=0", "file://"+page)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	shot, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, stderr.String())
	}
	return shot, stderr.String()
}

// pageProblems picks out of Chromium's log what the page itself caused:
// console messages (a script error, a resource the Content-Security-Policy
// blocked, anything logged), uncaught exceptions and failed loads.
// Chromium's own noise (no D-Bus in a container, no GPU) is not the page's.
var pageProblemRe = regexp.MustCompile(`(?m)^.*(?::CONSOLE[:(]|Uncaught|Content Security Policy|Refused to|net::ERR_).*$`)

func pageProblems(log string) []string {
	return pageProblemRe.FindAllString(log, -1)
}

// checkShot decodes a screenshot and checks that it has the window's size
// and shows something: a blank or broken page is one or two colours.
func checkShot(t *testing.T, shot []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != shotW || b.Dy() != shotH {
		t.Errorf("screenshot is %dx%d, want %dx%d", b.Dx(), b.Dy(), shotW, shotH)
	}
	colours, inked := census(img)
	if colours < 32 || inked < 0.03 {
		t.Errorf("the screenshot looks empty: %d colours, %.1f%% of pixels not white", colours, inked*100)
	}
}

// census counts the distinct colours of img and the share of pixels that
// are not white.
func census(img image.Image) (colours int, inked float64) {
	seen := map[uint32]bool{}
	b := img.Bounds()
	ink := 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[r>>8<<16|g>>8<<8|bl>>8] = true
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				ink++
			}
		}
	}
	return len(seen), float64(ink) / float64((b.Dx()/2)*(b.Dy()/2))
}

// TestHTMLReportInChromium writes the HTML report of the bundled demo
// capture (a real Claude Code session) with the binary, opens it in
// headless Chromium offline, and checks that the page loads nothing and
// logs nothing, and that the screenshot shows the report. A copy of the
// page with an external image and a script added must be caught, so that
// the check itself is known to work. Set TSINSPECT_SCREENSHOT to a file
// name to keep the screenshot.
func TestHTMLReportInChromium(t *testing.T) {
	chromium := findChromium(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "demo.db")
	if err := os.WriteFile(db, democapture.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "report.html")
	if code, _, stderr := runCLI(t, "report", db, "--format", "html", "--out", page); code != 0 {
		t.Fatalf("report --format html: exit %d: %s", code, stderr)
	}
	doc, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<script", "http://", "https://", "<link", "@import", "url("} {
		if bytes.Contains(doc, []byte(bad)) {
			t.Errorf("the page holds %q: it must be self-contained", bad)
		}
	}
	for _, want := range []string{"Content-Security-Policy", "<svg", "Catalog and working set", "Prompt tokens", "call_before_load", "Why it matters."} {
		if !bytes.Contains(doc, []byte(want)) {
			t.Errorf("the page lacks %q", want)
		}
	}

	shot, log := browse(t, chromium, page)
	if ps := pageProblems(log); len(ps) > 0 {
		t.Errorf("the page caused browser errors:\n%s", strings.Join(ps, "\n"))
	}
	checkShot(t, shot)
	if keep := os.Getenv("TSINSPECT_SCREENSHOT"); keep != "" {
		if err := os.WriteFile(keep, shot, 0o644); err != nil {
			t.Error(err)
		}
	}

	// The control: the same page with an external image and a script.
	broken := filepath.Join(dir, "broken.html")
	bad := bytes.Replace(doc, []byte("<main>"), []byte(`<main><img src="https://example.invalid/pixel.png" alt=""><script>console.error("tsinspect control")</script>`), 1)
	if err := os.WriteFile(broken, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	_, log = browse(t, chromium, broken)
	if len(pageProblems(log)) < 2 {
		t.Errorf("a page loading an external image and running a script went unnoticed; the browser logged:\n%s", log)
	}
}
