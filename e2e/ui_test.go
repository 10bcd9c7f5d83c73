package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestUITmux runs e2e/tui.sh: the built binary in a real terminal (tmux),
// driven through the demo with keys: the first flag, each tab, a search,
// quit. It checks what each screen shows, at 120x40 and 80x24, and that
// NO_COLOR leaves no colour on screen.
func TestUITmux(t *testing.T) {
	kit.Skips.Short(t, "tmux")
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("TSINSPECT_REQUIRE_CLAUDE") == "1" || os.Getenv("CI") != "" {
			t.Fatal("tmux is not installed; CI installs it (.ci/run)")
		}
		skipFor(t, "tmux", installTmux, "tmux is not installed")
	}
	cases := []struct {
		cols, lines int
		noColor     bool
	}{{120, 40, false}, {80, 24, false}, {80, 24, true}}
	for _, c := range cases {
		name := fmt.Sprintf("%dx%d", c.cols, c.lines)
		if c.noColor {
			name += "_NO_COLOR"
		}
		t.Run(name, func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.Command("bash", filepath.Join(kit.Root, "e2e", "tui.sh"), kit.Tsinspect, out, strconv.Itoa(c.cols), strconv.Itoa(c.lines))
			cmd.Env = append(os.Environ(), "NO_COLOR=")
			if c.noColor {
				cmd.Env = append(cmd.Env, "NO_COLOR=1")
			}
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("tui.sh: %v\n%s", err, b)
			}
			screen := func(name string) string {
				matches, _ := filepath.Glob(filepath.Join(out, "*-"+name+".txt"))
				if len(matches) != 1 {
					t.Fatalf("no screen %q in %s", name, out)
				}
				b, err := os.ReadFile(matches[0])
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			want := func(name string, parts ...string) {
				t.Helper()
				s := screen(name)
				for _, p := range parts {
					if !strings.Contains(s, p) {
						t.Errorf("screen %s lacks %q:\n%s", name, p, s)
					}
				}
			}
			want("start", "tsinspect demo  7 turns · 2 threads · 3 flags", "THREAD", "sub1",
				"▲ empty_search", "✖ call_before_load", "▲ cache_break", "Working set of #1 (main)", "q quit")
			// Flag names stay whole: at 80 columns the TIME column gives way.
			if c.cols >= 100 {
				want("start", "# TIME")
			} else if strings.Contains(screen("start"), "TIME") {
				t.Errorf("TIME shown at %d columns:\n%s", c.cols, screen("start"))
			}
			want("first-flag", "Working set of #3 (main)", "Loaded by search (1)", "mcp__demo__echo", "5 Flags 1")
			want("tab-1", "Always loaded (11)")
			want("tab-2", "Catalog of #3 (main): 56 deferred tools, 1 loaded", "● mcp__demo__echo", "○ CronCreate")
			want("tab-3", `ToolSearch "select:mcp__demo__echo"`, `ToolSearch "weather forecast"`, "no match", "called mcp__demo__echo at #3")
			want("tab-4", "Prompt cache across main (6 turns)", "█ read", "#3  prompt 22.1k", "Prefix vs #2")
			want("tab-5", "▲ empty_search", "What happened", "Why it matters")
			want("tab-6", "▾ request  POST /v1/messages?beta=true", "▸ messages: [5]")
			if c.lines >= 40 {
				want("tab-6", "▾ response  200", "▸ events  (15)")
			}
			// A bare word finds the turns whose row or content holds it:
			// the catalog that lists echo, its search, its call, the
			// subagent told of it, the closing text; not the turns that
			// call action_7 and the Agent.
			want("search", "/echo 5 shown")
			if s := screen("search"); strings.Contains(s, "call_before") {
				t.Errorf("the search left turns that do not mention echo:\n%s", s)
			}
			if b, _ := os.ReadFile(filepath.Join(out, "exit")); strings.TrimSpace(string(b)) != "0" {
				t.Errorf("exit status %q", b)
			}
			ansi, err := os.ReadFile(filepath.Join(out, "00-start.ansi"))
			if err != nil {
				t.Fatal(err)
			}
			colours, reverse := sgr(string(ansi))
			switch {
			case c.noColor && colours > 0:
				t.Errorf("NO_COLOR: %d colour codes on screen", colours)
			case !c.noColor && colours == 0:
				t.Errorf("no colour on screen")
			case reverse == 0:
				t.Errorf("the selected row is not in reverse video")
			}
		})
	}
}

// sgrSeq is an SGR escape sequence.
var sgrSeq = regexp.MustCompile("\x1b\\[([0-9;]*)m")

// sgr counts the colour and reverse-video codes in terminal output.
func sgr(s string) (colours, reverse int) {
	for _, m := range sgrSeq.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.Split(m[1], ";") {
			n, err := strconv.Atoi(p)
			if err != nil {
				continue
			}
			switch {
			case n >= 30 && n <= 38, n >= 40 && n <= 48, n >= 90 && n <= 97, n >= 100 && n <= 107:
				colours++
			case n == 7:
				reverse++
			}
		}
	}
	return colours, reverse
}

// TestUIBadInput checks that open, replay and demo answer bad input with
// one line before touching the terminal, and fail cleanly without one.
func TestUIBadInput(t *testing.T) {
	dir := t.TempDir()
	notCapture := filepath.Join(dir, "notes.txt")
	os.WriteFile(notCapture, []byte("hello"), 0o600)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"open without a file", []string{"open"}, 2, "open: want one capture FILE"},
		{"open a missing file", []string{"open", filepath.Join(dir, "none.db")}, 1, "does not exist"},
		{"open a text file", []string{"open", notCapture}, 1, "not a tsinspect capture file"},
		{"replay with a bad speed", []string{"replay", "x.db", "--speed", "0"}, 2, "--speed 0"},
		{"replay a text file", []string{"replay", notCapture}, 1, "not a tsinspect capture file"},
		{"demo with an argument", []string{"demo", "x"}, 2, `demo: unexpected argument "x"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, c.code, stderr)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "tsinspect: ") || !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q: want one line 'tsinspect: ...%s...'", stderr, c.want)
			}
		})
	}
	t.Run("demo without a terminal", func(t *testing.T) {
		cmd := exec.Command(kit.Tsinspect, "demo")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("exit: %v", err)
		}
		if s := stderr.String(); strings.Count(s, "\n") != 1 || !strings.HasPrefix(s, "tsinspect: start the terminal: ") {
			t.Errorf("stderr %q", s)
		}
	})
}
