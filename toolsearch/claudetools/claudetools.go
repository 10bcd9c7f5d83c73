// Package claudetools holds what the project recorded of Claude Code's
// own deferred tools, per release: their names and descriptions (what
// ToolSearch scores) and the size of each definition. Claude Code sends a
// deferred tool's definition only once a search loads it, so a capture
// rarely holds them, yet they compete in every search. Each file is
// written by `go test ./toolsearch -run TestRecordClaudeTools -record`
// with that release, from the catalog it announced.
package claudetools

import (
	"embed"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/tsinspect/tsinspect/exchange"
)

//go:embed *.json
var files embed.FS

// Tool is one of Claude Code's deferred tools.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Bytes is the definition's size as compact JSON with sorted keys.
	Bytes int `json:"bytes"`
}

// Release is the deferred tools of one Claude Code release.
type Release struct {
	Version string `json:"claude_code"`
	Tools   []Tool `json:"tools"`
}

// Releases returns every recorded release, oldest first. The embedded
// files are decoded once; each call gets its own slice.
func Releases() []Release { return slices.Clone(decoded()) }

// decoded reads the embedded releases the first time it is called: the
// deferral figures ask for a tool's size on every turn.
var decoded = sync.OnceValue(func() []Release {
	entries, _ := files.ReadDir(".")
	var out []Release
	for _, e := range entries {
		b, err := files.ReadFile(e.Name())
		if err != nil {
			panic(fmt.Sprintf("claudetools: %s: %v", e.Name(), err))
		}
		var r Release
		if err := json.Unmarshal(b, &r); err != nil {
			panic(fmt.Sprintf("claudetools: %s: %v", e.Name(), err))
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return exchange.CompareVersions(out[i].Version, out[j].Version) < 0 })
	return out
})

// For returns the recorded release that best stands for Claude Code
// version v: v itself, else the newest recorded before it, else the
// oldest recorded (v "" or older than all: the newest). exact says
// whether it is v's own.
func For(v string) (r Release, exact bool) {
	all := Releases()
	if len(all) == 0 {
		return Release{}, false
	}
	if v == "" {
		return all[len(all)-1], false
	}
	best := -1
	for i, rel := range all {
		switch c := exchange.CompareVersions(rel.Version, v); {
		case c == 0:
			return rel, true
		case c < 0:
			best = i
		}
	}
	if best < 0 {
		return all[0], false
	}
	return all[best], false
}

// Size returns the recorded size in bytes of Claude Code version v's
// deferred tool name (see For), and whether there is one.
func Size(v, name string) (int, bool) {
	r, _ := For(v)
	for _, t := range r.Tools {
		if t.Name == name {
			return t.Bytes, true
		}
	}
	return 0, false
}

// Newest is the newest release whose deferred tools were recorded.
func Newest() string {
	r, _ := For("")
	return r.Version
}

// Versions lists the releases whose deferred tools were recorded.
func Versions() []string {
	var out []string
	for _, r := range Releases() {
		out = append(out, r.Version)
	}
	return out
}

// Pick is the release --claude-tools names: "" the newest recorded,
// "none" no release (the zero Release), else a recorded version.
func Pick(name string) (Release, error) {
	switch name {
	case "none":
		return Release{}, nil
	case "":
		r, _ := For("")
		return r, nil
	}
	r, exact := For(name)
	if !exact {
		return r, fmt.Errorf("--claude-tools %q: recorded releases are %s (or none)", name, strings.Join(Versions(), ", "))
	}
	return r, nil
}
