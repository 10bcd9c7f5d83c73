package decode

import "strings"

// MCPPrefix starts the name Claude Code gives an MCP server's tool:
// mcp__SERVER__TOOL.
const MCPPrefix = "mcp__"

// IsMCP reports whether name is an MCP tool's (it starts with
// [MCPPrefix]).
func IsMCP(name string) bool { return strings.HasPrefix(name, MCPPrefix) }

// SplitMCP splits an MCP tool's name, mcp__SERVER__TOOL, at the first
// "__" after the prefix. ok is true when the name has both the prefix and
// that separator. A name with the prefix but no separator gives all that
// follows the prefix as server and "" as tool; a name without the prefix
// gives "", "".
func SplitMCP(name string) (server, tool string, ok bool) {
	rest, found := strings.CutPrefix(name, MCPPrefix)
	if !found {
		return "", "", false
	}
	return strings.Cut(rest, "__")
}
