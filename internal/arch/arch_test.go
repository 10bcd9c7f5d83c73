// Package arch_test holds the project's map to the code: which package owns
// each outside library, and which imports must not exist. docs/ARCHITECTURE.md
// describes the same layout; a change to either is a change to both.
package arch_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/tsinspect/tsinspect"

// owners names, for each outside module, the one package of this module
// that may import it (tests may use any, to make inputs).
var owners = map[string]string{
	"github.com/mattn/go-sqlite3":    "store",
	"github.com/rivo/tview":          "ui",
	"github.com/gdamore/tcell/v2":    "ui",
	"github.com/gopacket/gopacket":   "importer/pcap",
	"golang.org/x/crypto":            "importer/tlsrec",
	"gopkg.in/yaml.v3":               "importer/vcr",
	"github.com/elazarl/goproxy":     "capture",
	"golang.org/x/sys":               "capture",
	"github.com/andybalholm/brotli":  "contentcoding",
	"github.com/klauspost/compress":  "contentcoding",
	"go.opentelemetry.io/proto/otlp": "otlp",
	"google.golang.org/protobuf":     "otlp",
	"github.com/jackc/pgx/v5":        "team",
}

// testOnly names, for each outside library only tests use (an import path
// prefix), the one package whose tests may import it: no package's own
// code may.
var testOnly = map[string]string{
	"github.com/chromedp/": "web", // chromedp and its cdproto: the web view's tests drive Chromium
}

// pure are the packages that decode, link and present: no file, network,
// database or process, and none of the packages that do those.
var pure = []string{"decode", "timeline", "timeline/view", "timeline/tooltokens", "timeline/compare", "filter", "toolsearch", "advice"}

// impure is what a pure package must not import.
var impure = []string{"os", "os/exec", "os/signal", "io/fs", "net", "net/http", "database/sql", "path/filepath",
	module + "/store", module + "/capture", module + "/importer", module + "/ui", module + "/otlp", module + "/replayserver"}

// onlyFrom lists packages that only the given importers may import
// (prefixes: "bench/" is every benchmark command; the libraries they
// share, under internal/bench, do not get what bench/ is allowed).
var onlyFrom = map[string][]string{
	// The importers are reached through the command; the core knows
	// sources only as package exchange describes them.
	"importer": {"cmd/tsinspect", "importer"},
	// The terminal UI is the command's (and the benchmarks').
	"ui": {"cmd/tsinspect", "bench/"},
	// So is the web view.
	"web": {"cmd/tsinspect"},
	// Many sessions' advice facts are read for the catalog, which every
	// front end asks (one finding, one filter, one cache).
	"gather": {"catalog"},
}

// forbidden are imports that must not exist: the UI reads captures through
// package source, never from the store itself, and shows what it shows
// through its view model (timeline/view), never through the report; the
// web view reads through package source too.
var forbidden = [][2]string{{"ui", "store"}, {"ui", "report"}, {"web", "store"}}

// reachedOnlyVia says, for each forbidden import, through which packages
// the first may still reach the second by a chain of imports (none: it
// may not reach it at all). The UI and the web view reach the store only
// through package source, which is how they read captures; and the web
// view through textout, whose notes under the listing it shows and whose
// exchanges table takes the store's rows (store.Summary, a type).
var reachedOnlyVia = map[[2]string][]string{
	{"ui", "store"}:  {"source"},
	{"ui", "report"}: nil,
	{"web", "store"}: {"source", "textout"},
}

type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(&out)
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		p.ImportPath = strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	return pkgs
}

// outside returns the outside module an import path belongs to, "" for
// the standard library and this module.
func outside(path string) string {
	if strings.HasPrefix(path, module) || !strings.Contains(strings.SplitN(path, "/", 2)[0], ".") {
		return ""
	}
	for m := range owners {
		if path == m || strings.HasPrefix(path, m+"/") {
			return m
		}
	}
	return path
}

// within reports whether package p is q or inside it.
func within(p, q string) bool {
	return p == q || strings.HasPrefix(p, q+"/") || strings.HasSuffix(q, "/") && strings.HasPrefix(p, q)
}

func TestOneOwnerPerLibrary(t *testing.T) {
	importers := map[string][]string{}
	for _, p := range listPackages(t) {
		for _, imp := range p.Imports {
			if m := outside(imp); m != "" {
				importers[m] = append(importers[m], p.ImportPath)
			}
		}
	}
	for m, ps := range importers {
		sort.Strings(ps)
		if prefix, ok := testOnlyPrefix(m); ok {
			t.Errorf("%s is imported by %v: only the tests of %s may import it", m, ps, testOnly[prefix])
			continue
		}
		owner, ok := owners[m]
		if !ok {
			t.Errorf("%s is imported by %v and has no owner: name one in owners (and docs/ARCHITECTURE.md)", m, ps)
			continue
		}
		for _, p := range ps {
			if p != owner {
				t.Errorf("%s imports %s, which only %s may import", p, m, owner)
			}
		}
	}
	for m, owner := range owners {
		if len(importers[m]) == 0 {
			t.Errorf("owners names %s for %s, which nothing imports: remove it", owner, m)
		}
	}
}

// testOnlyPrefix returns the testOnly prefix an import path starts with.
func testOnlyPrefix(path string) (string, bool) {
	for prefix := range testOnly {
		if strings.HasPrefix(path, prefix) {
			return prefix, true
		}
	}
	return "", false
}

// TestTestOnly holds the libraries only tests use to the tests of their
// one package.
func TestTestOnly(t *testing.T) {
	used := map[string]bool{}
	for _, p := range listPackages(t) {
		for _, imp := range append(append([]string(nil), p.TestImports...), p.XTestImports...) {
			prefix, ok := testOnlyPrefix(imp)
			if !ok {
				continue
			}
			used[prefix] = true
			if owner := testOnly[prefix]; p.ImportPath != owner {
				t.Errorf("the tests of %s import %s, which only the tests of %s may import", p.ImportPath, imp, owner)
			}
		}
	}
	for m, owner := range testOnly {
		if !used[m] {
			t.Errorf("testOnly names %s for %s, whose tests do not import it: remove it", owner, m)
		}
	}
}

// graph is this module's packages and what each imports of the module
// (their own code, not their tests).
type graph map[string][]string

func moduleGraph(pkgs []pkg) graph {
	g := graph{}
	for _, p := range pkgs {
		g[p.ImportPath] = nil
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module+"/") {
				g[p.ImportPath] = append(g[p.ImportPath], strings.TrimPrefix(imp, module+"/"))
			}
		}
	}
	return g
}

// chain is the shortest chain of imports from package from to a package
// for which hit is true, not passing through a package for which skip is
// true ("from" itself is never skipped), as "a -> b -> c"; "" when there
// is none.
func (g graph) chain(from string, hit, skip func(string) bool) string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, q := range g[p] {
			if _, seen := prev[q]; seen {
				continue
			}
			prev[q] = p
			if hit(q) {
				path := []string{q}
				for at := p; at != ""; at = prev[at] {
					path = append([]string{at}, path...)
				}
				return strings.Join(path, " -> ")
			}
			if !skip(q) {
				queue = append(queue, q)
			}
		}
	}
	return ""
}

// TestReach holds the map beyond direct imports: what a package may not
// import it may not reach through others either. A pure package reaches
// none of the module's packages that do I/O; the importers, the UI and the
// web view are reached only from where they may be imported; and a
// forbidden import is not made by way of another package, but where
// reachedOnlyVia says through which packages it may.
func TestReach(t *testing.T) {
	g := moduleGraph(listPackages(t))
	never := func(string) bool { return false }
	for _, p := range pure {
		if _, ok := g[p]; !ok {
			t.Errorf("pure names %s, which is not a package", p)
			continue
		}
		isImpure := func(q string) bool {
			for _, bad := range impure {
				if strings.HasPrefix(bad, module+"/") && within(q, strings.TrimPrefix(bad, module+"/")) {
					return true
				}
			}
			return false
		}
		if c := g.chain(p, isImpure, never); c != "" {
			t.Errorf("%s reaches a package that does I/O: %s", p, c)
		}
	}
	for p := range g {
		for guarded, allowed := range onlyFrom {
			ok := within(p, guarded)
			for _, a := range allowed {
				ok = ok || within(p, a)
			}
			if ok {
				continue
			}
			// Through a package allowed to import it is the way in.
			through := func(q string) bool { return slices.ContainsFunc(allowed, func(a string) bool { return within(q, a) }) }
			if c := g.chain(p, func(q string) bool { return within(q, guarded) }, through); c != "" {
				t.Errorf("%s reaches %s, which only %v may import: %s", p, guarded, allowed, c)
			}
		}
	}
	for _, f := range forbidden {
		via, ok := reachedOnlyVia[f]
		if !ok {
			t.Errorf("forbidden holds %s -> %s, which reachedOnlyVia does not: say through which packages it may be reached (nil: none)", f[0], f[1])
			continue
		}
		through := func(q string) bool {
			for _, v := range via {
				if within(q, v) {
					return true
				}
			}
			return false
		}
		if c := g.chain(f[0], func(q string) bool { return within(q, f[1]) }, through); c != "" {
			if len(via) == 0 {
				t.Errorf("%s reaches %s: %s", f[0], f[1], c)
			} else {
				t.Errorf("%s reaches %s other than through %v: %s", f[0], f[1], via, c)
			}
		}
	}
}

func TestForbiddenImports(t *testing.T) {
	pkgs := listPackages(t)
	for _, p := range pkgs {
		for _, q := range pure {
			if p.ImportPath != q {
				continue
			}
			for _, imp := range p.Imports {
				for _, bad := range impure {
					if imp == bad || strings.HasPrefix(bad, module) && within(imp, bad) {
						t.Errorf("%s imports %s: it decodes and presents and does no I/O", p.ImportPath, imp)
					}
				}
			}
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			target := strings.TrimPrefix(imp, module+"/")
			for _, f := range forbidden {
				if p.ImportPath == f[0] && target == f[1] {
					t.Errorf("%s imports %s", f[0], f[1])
				}
			}
			for guarded, allowed := range onlyFrom {
				if !within(target, guarded) {
					continue
				}
				ok := false
				for _, a := range allowed {
					ok = ok || within(p.ImportPath, a)
				}
				if !ok {
					t.Errorf("%s imports %s, which only %v may import", p.ImportPath, target, allowed)
				}
			}
		}
	}
}
