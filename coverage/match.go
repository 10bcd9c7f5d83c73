package coverage

import (
	"fmt"
	"path"
	"strings"

	"github.com/tsinspect/tsinspect/internal/numfmt"
)

// PatternError is a tool name pattern that does not parse.
type PatternError struct {
	Pattern string
	Err     error
}

func (e *PatternError) Error() string { return fmt.Sprintf("%q: %v", e.Pattern, e.Err) }

func (e *PatternError) Unwrap() error { return e.Err }

// Matcher turns tool name patterns into a name filter, nil when there are
// none: globs (mcp__github__*), and, without * ? or [, the start of a
// name. A pattern that does not parse is a *PatternError.
func Matcher(patterns []string) (func(string) bool, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			return nil, &PatternError{Pattern: p, Err: err}
		}
	}
	return func(name string) bool {
		for _, p := range patterns {
			if !strings.ContainsAny(p, "*?[") {
				if strings.HasPrefix(name, p) {
					return true
				}
				continue
			}
			if ok, _ := path.Match(p, name); ok {
				return true
			}
		}
		return false
	}, nil
}

// Missing names the tools that were not found by a search (require
// "found": loaded by a search, or always loaded) or, with require
// "called", never called with their schema loaded.
func Missing(tools []*Tool, require string) []string {
	var missing []string
	for _, t := range tools {
		ok := len(t.FoundBy) > 0 || t.FirstLoaded > 0 || !t.Deferred
		if require == "called" {
			ok = t.Calls > t.Blind
		}
		if !ok {
			missing = append(missing, t.Name)
		}
	}
	return missing
}

// CheckFlags checks the flags of 'tsinspect searches' that go together:
// --require found or called, with --tools (tools: given); --mcp-config
// (mcpConfig: given) with --explain.
func CheckFlags(require string, tools, mcpConfig, explain bool) error {
	switch {
	case require != "" && require != "found" && require != "called":
		return fmt.Errorf("--require %q: want found or called", require)
	case require != "" && !tools:
		return fmt.Errorf("--require needs --tools to say which tools")
	case mcpConfig && !explain:
		return fmt.Errorf("--mcp-config goes with --explain")
	}
	return nil
}

// Required says, in one line, what fails a --require of found or called
// over the tools picked by patterns: no tool matched, or the tools
// Missing names; "" when nothing does.
func Required(tools []*Tool, require, patterns string) string {
	missing := Missing(tools, require)
	what := map[string]string{"found": "never found by a search", "called": "never called with its schema loaded"}[require]
	switch {
	case len(tools) == 0:
		return fmt.Sprintf("--require %s: no tool matches --tools %s", require, patterns)
	case len(missing) > 0:
		return fmt.Sprintf("--require %s: %d of %s %s: %s", require, len(missing), numfmt.Count(len(tools), "tool", "tools"), what, strings.Join(missing, ", "))
	}
	return ""
}
