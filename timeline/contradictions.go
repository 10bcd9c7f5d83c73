package timeline

import (
	"fmt"
	"strings"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/internal/numfmt"
)

// Contradictions between what the model is told about tools and what it
// can do with them.
const (
	// FlagCatalogNoSearch: deferred tools are announced ("available via
	// ToolSearch ... calling them directly will fail") but the request
	// offers no tool search.
	FlagCatalogNoSearch = "catalog_without_search"
	// FlagSearchNoCatalog: ToolSearch is offered but the catalog is empty.
	FlagSearchNoCatalog = "search_without_catalog"
	// FlagDeferredInline: a tool announced as deferred is sent inline with
	// its full schema.
	FlagDeferredInline = "deferred_sent_inline"
	// FlagUnknownReference: a tool_reference names a tool in neither the
	// catalog nor the tools.
	FlagUnknownReference = "unknown_reference"
	// FlagReferenceNotSent: a tool loaded by a tool_reference is absent
	// from a later request's tools.
	FlagReferenceNotSent = "reference_not_sent"
)

// hasSearchTool reports whether the request offers a tool search, client
// or server.
func hasSearchTool(tools []decode.Tool) bool {
	for _, t := range tools {
		if t.Name == decode.ClientSearchTool || t.ServerSearch {
			return true
		}
	}
	return false
}

// textAnnounced reports whether a catalog event is one of Claude Code's
// texts telling the model that tools are deferred behind ToolSearch (a
// reminder or an <available-deferred-tools> block), as opposed to a
// tool_addition block or the deferred entries of tools.
func textAnnounced(e decode.CatalogEvent) bool {
	return e.Message >= 0 && !e.Remove && len(e.Names) > 0 && (e.Form == "reminder" || e.Form == "available-deferred-tools")
}

// announcement returns the first text announcement of deferred tools.
func announcement(d *decode.Turn) (decode.CatalogEvent, bool) {
	for _, e := range d.CatalogEvents {
		if textAnnounced(e) {
			return e, true
		}
	}
	return decode.CatalogEvent{}, false
}

// inlineAnnounced lists, in tools order, the tools of the catalog that a
// text announced as deferred and that the request sends without
// defer_loading.
func inlineAnnounced(d *decode.Turn) []string {
	if len(d.Request.Tools) == 0 {
		return nil // no tool sent, none inline
	}
	announced := map[string]bool{}
	for _, e := range d.CatalogEvents {
		if textAnnounced(e) {
			for _, n := range e.Names {
				announced[n] = true
			}
		}
	}
	var out []string
	for _, t := range d.Request.Tools {
		if !t.DeferLoading && !t.Placeholder && announced[t.Name] && d.InCatalog(t.Name) {
			out = append(out, t.Name)
		}
	}
	return out
}

func ruleCatalogNoSearch(v ruleView, k int) []Flag {
	in := v.turn(k)
	d := in.d
	ev, ok := announcement(d)
	// A request with no tools at all (a title or a compaction summary)
	// asks for text only: the announcement is just history there.
	if !ok || len(d.Catalog) == 0 || len(d.Request.Tools) == 0 || hasSearchTool(d.Request.Tools) || v.earlierFlag(k, FlagCatalogNoSearch, "") {
		return nil
	}
	where := fmt.Sprintf("message %d", ev.Message)
	if ev.Block >= 0 {
		where += fmt.Sprintf(", block %d", ev.Block)
	}
	det := fmt.Sprintf("The request announces %s as deferred (%s, %s: %s) and tells the model to load them with ToolSearch, but its %s hold no ToolSearch nor any server tool search: the model is told to use a tool that does not exist.",
		numfmt.Count(len(d.Catalog), "tool", "tools"), ev.Form, where, nameList(d.Catalog, 3), numfmt.Count(len(d.Request.Tools), "tool", "tools"))
	if inline := inlineAnnounced(d); len(inline) > 0 {
		det += fmt.Sprintf(" %d of the announced tools %s sent inline with full schemas and could be called directly.", len(inline), numfmt.Plural(len(inline), "is", "are"))
	}
	return []Flag{{Detail: det}}
}

func ruleSearchNoCatalog(v ruleView, k int) []Flag {
	in := v.turn(k)
	d := in.d
	offered := false
	for _, t := range d.Request.Tools {
		offered = offered || t.Name == decode.ClientSearchTool
	}
	if !offered || len(d.Catalog) > 0 || v.earlierFlag(k, FlagSearchNoCatalog, "") {
		return nil
	}
	return []Flag{{Detail: fmt.Sprintf("ToolSearch is among the %s of the request, but no deferred tool is announced (no reminder, no <available-deferred-tools>, no defer_loading tool): every search can only come back empty.", numfmt.Count(len(d.Request.Tools), "tool", "tools"))}}
}

func ruleDeferredInline(v ruleView, k int) []Flag {
	in := v.turn(k)
	var fresh []string
	for _, n := range in.inline {
		if !v.earlierFlag(k, FlagDeferredInline, n) {
			fresh = append(fresh, n)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	f := Flag{Detail: fmt.Sprintf("%s announced as deferred (\"schemas are NOT loaded\") %s sent inline with %s full %s in tools: %s. The model is told to search for %s it can call directly.",
		numfmt.Count(len(fresh), "tool", "tools"), numfmt.Plural(len(fresh), "is", "are"), numfmt.Plural(len(fresh), "its", "their"), numfmt.Plural(len(fresh), "schema", "schemas"),
		strings.Join(fresh, ", "), numfmt.Plural(len(fresh), "a tool", "tools"))}
	if len(fresh) == 1 {
		f.Tool = fresh[0]
	}
	return []Flag{f}
}

func ruleUnknownReference(v ruleView, k int) []Flag {
	in := v.turn(k)
	d := in.d
	if d.Request.Transcript != nil {
		// Made from a transcript: the tools sent are not known, and the
		// catalog is written when Claude Code notes a change (MCP tools
		// may join it after they were found), or not at all.
		return nil
	}
	inTools := map[string]bool{}
	for _, t := range d.Request.Tools {
		inTools[t.Name] = true
	}
	var out []Flag
	for _, s := range in.t.NewSearches {
		for _, n := range s.Results {
			if d.InCatalog(n) || inTools[n] {
				continue
			}
			where := "its result in the last user message"
			if s.Server {
				where = "its result in the response"
			}
			out = append(out, Flag{Tool: n, Search: s.ToolUseID, Detail: fmt.Sprintf("%s %q returned a tool_reference to %s (%s), a name in neither the catalog (%s) nor the request's %s: nothing can load it, and the API refuses a reference to a tool it is not sent.",
				s.Tool, s.Query, n, where, numfmt.Count(len(d.Catalog), "tool", "tools"), numfmt.Count(len(d.Request.Tools), "tool", "tools"))})
		}
	}
	return out
}

func ruleReferenceNotSent(v ruleView, k int) []Flag {
	in := v.turn(k)
	d := in.d
	refused := in.t.Exchange != nil && in.t.Exchange.Status == 400
	if len(d.Request.Tools) == 0 && !refused {
		return nil // a text-only side request; unless the API refused it
	}
	var out []Flag
	for _, n := range d.MissingReferences {
		if !d.InCatalog(n) && referencedHere(in, n) {
			continue // unknown_reference says it
		}
		if v.earlierFlag(k, FlagReferenceNotSent, n) {
			continue
		}
		det := fmt.Sprintf("A tool_reference in the history loads %s, but this request's %s do not include it: the search's result is not honoured", n, numfmt.Count(len(d.Request.Tools), "tool", "tools"))
		if refused {
			det += ", and the API refused the request with HTTP 400"
		}
		out = append(out, Flag{Tool: n, Detail: det + "."})
	}
	return out
}

// referencedHere reports whether a search new in turn in returned name.
func referencedHere(in *info, name string) bool {
	for _, s := range in.d.NewSearches {
		for _, n := range s.Results {
			if n == name {
				return true
			}
		}
	}
	return false
}

// flagNames is the set of tool names a deferred_sent_inline flag lists.
func flagNames(f Flag) map[string]bool {
	out := map[string]bool{}
	if f.Tool != "" {
		out[f.Tool] = true
		return out
	}
	_, rest, ok := strings.Cut(f.Detail, " in tools: ")
	if !ok {
		return out
	}
	list, _, _ := strings.Cut(rest, ". ")
	for _, n := range strings.Split(list, ", ") {
		out[n] = true
	}
	return out
}

// nameList shows up to n names and how many more.
func nameList(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(" and %d more", len(names)-n)
}
