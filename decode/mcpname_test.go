package decode

import "testing"

func TestSplitMCP(t *testing.T) {
	for _, c := range []struct {
		name, server, tool string
		ok                 bool
	}{
		{"mcp__github__create_issue", "github", "create_issue", true},
		{"mcp__a__b__c", "a", "b__c", true},
		{"mcp__github", "github", "", false},
		{"mcp____x", "", "x", true},
		{"Read", "", "", false},
		{"", "", "", false},
	} {
		server, tool, ok := SplitMCP(c.name)
		if server != c.server || tool != c.tool || ok != c.ok {
			t.Errorf("SplitMCP(%q) = %q, %q, %v; want %q, %q, %v", c.name, server, tool, ok, c.server, c.tool, c.ok)
		}
		if IsMCP(c.name) != (c.name != "Read" && c.name != "") {
			t.Errorf("IsMCP(%q) = %v", c.name, IsMCP(c.name))
		}
	}
}
