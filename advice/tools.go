package advice

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/internal/numfmt"
)

// toolAcross is one tool across the sessions.
type toolAcross struct {
	name, server string
	// offered: sessions that offered it; used: that called it; searched:
	// that searched for it before its first call.
	offered, used, searched []*Facts
	per                     map[*Facts]*Tool
	calls                   int
	// size is its schema's size in tokens, from the best source any
	// session has.
	size     int64
	sizeFrom string
}

// toolsAcross gathers the tools of the sessions by name, in name order.
func (a *adviser) toolsAcross() []*toolAcross {
	byName := map[string]*toolAcross{}
	rank := map[string]int{SizeRequest: 3, SizeFiles: 2, SizeEstimate: 1}
	for _, f := range a.fs {
		for i := range f.Tools {
			t := &f.Tools[i]
			ta := byName[t.Name]
			if ta == nil {
				ta = &toolAcross{name: t.Name, server: t.Server, per: map[*Facts]*Tool{}}
				byName[t.Name] = ta
			}
			ta.per[f] = t
			if t.Requests > 0 {
				ta.offered = append(ta.offered, f)
			}
			if t.UsedThreads > 0 || t.Calls > 0 {
				ta.used = append(ta.used, f)
			}
			if t.SearchedThreads > 0 {
				ta.searched = append(ta.searched, f)
			}
			ta.calls += t.Calls
			// The best source wins; among sizes from requests, the
			// largest (a definition may change between releases).
			if r := rank[t.SchemaFrom]; r > rank[ta.sizeFrom] || r == rank[ta.sizeFrom] && t.SchemaTokens > ta.size {
				ta.size, ta.sizeFrom = t.SchemaTokens, t.SchemaFrom
			}
		}
	}
	out := make([]*toolAcross, 0, len(byName))
	for _, ta := range byName {
		out = append(out, ta)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// sizePhrase says where a schema size comes from.
func sizePhrase(from string) string {
	switch from {
	case SizeRequest:
		return "as the requests sent it"
	case SizeFiles:
		return "from the definition the session files keep, at 2.5 bytes a token"
	case SizeEstimate:
		return "estimated: the average deferred schema of its server that the sessions sent"
	}
	return "unknown"
}

// loadUpFront advises loading up front the MCP tools that sessions keep
// searching for before their first call, where the searches' round trips
// cost more than carrying the schema in every request would.
func (a *adviser) loadUpFront() {
	for _, ta := range a.toolsAcross() {
		if len(ta.searched) == 0 {
			continue
		}
		// "Most sessions where it is used".
		if len(ta.searched)*2 <= len(ta.used) {
			continue
		}
		if !a.enough(KindLoadUpFront, ta.name, len(ta.searched)) {
			continue
		}
		if ta.server == "" {
			a.r.LeftOut = append(a.r.LeftOut, LeftOut{Kind: KindLoadUpFront, Subject: ta.name, Sessions: len(ta.searched),
				Reason: "one of Claude Code's own deferred tools: nothing marks it to load up front (ENABLE_TOOL_SEARCH=false sends every tool whole)"})
			continue
		}
		if ta.sizeFrom == "" {
			a.r.LeftOut = append(a.r.LeftOut, LeftOut{Kind: KindLoadUpFront, Subject: ta.name, Sessions: len(ta.searched),
				Reason: "its schema's size is not known (no session sent it), so what carrying it would cost is not known"})
			continue
		}
		var tripUSD, rateSum float64
		var tripTokens int64
		var trips float64
		var waiting, searches int
		perSession := map[*Facts]float64{}
		var ev []Evidence
		for _, f := range ta.offered {
			t := ta.per[f]
			tripUSD += t.RoundTripUSD
			tripTokens += t.RoundTripTokens
			trips += t.RoundTrips
			rateSum += t.WaitingRate
			waiting += t.Waiting
			carry := float64(ta.size) * t.WaitingRate / 1e6
			perSession[f] = t.RoundTripUSD - carry
			searches += len(t.SearchTurns)
			if t.SearchedThreads > 0 {
				ev = append(ev, Evidence{Session: f.ID, Project: f.Project, Turns: append([]int(nil), t.SearchTurns...), USD: t.RoundTripUSD - carry,
					Note: fmt.Sprintf("%s before its first call", numfmt.Count(len(t.SearchTurns), "search", "searches"))})
			}
		}
		carryUSD := float64(ta.size) * rateSum / 1e6
		carryTokens := ta.size * int64(waiting)
		saves := tripUSD - carryUSD
		if saves <= 0 {
			a.r.LeftOut = append(a.r.LeftOut, LeftOut{Kind: KindLoadUpFront, Subject: ta.name, Sessions: len(ta.searched),
				Reason: fmt.Sprintf("does not pay: its searches cost %s, carrying its schema in every request would cost %s", usd(tripUSD), usd(carryUSD))})
			continue
		}
		adv := Advice{
			Kind: KindLoadUpFront, Subject: ta.name,
			Title:    fmt.Sprintf("Load %s up front", ta.name),
			Sessions: len(ta.searched), Of: len(ta.used),
			Why: fmt.Sprintf("In %s of the %s sessions that called it, the model searched for it before its first call (%s, %s round trips once a search that loaded several tools is shared among them); %s announced it.",
				numfmt.Thousands(int64(len(ta.searched))), numfmt.Thousands(int64(len(ta.used))), numfmt.Count(searches, "search", "searches"), trimFloat(trips), numfmt.Count(len(ta.offered), "session", "sessions")),
			Do: fmt.Sprintf("Mark it `_meta[\"anthropic/alwaysLoad\"]: true` in the %s MCP server's tool list: Claude Code (2.1.100 and later) then sends its schema from the first request and no search is needed. "+
				"If you cannot change the server, `\"alwaysLoad\": true` on its entry in your MCP configuration loads all its tools up front (verified in Claude Code %s; the figure counts this tool's schema only), "+
				"or name it in CLAUDE.md (\"load %s with ToolSearch select:%s before using it\"): that keeps the search but spares the ones that miss.", ta.server, verifiedReleases, ta.name, ta.name),
			SavesUSD: saves, Tokens: tripTokens - carryTokens,
			Figures: []string{
				fmt.Sprintf("the searches before its first calls cost %s (%s tokens: the requests made only to carry their results, and the search calls)", usd(tripUSD), tokens(tripTokens)),
				fmt.Sprintf("its schema, %s tokens (%s), in the %s requests that announced it without it would cost %s (%s tokens)", tokens(ta.size), sizePhrase(ta.sizeFrom), numfmt.Thousands(int64(waiting)), usd(carryUSD), tokens(carryTokens)),
			},
			Assumes:   "each search before a first call is spared with its round trip (shared among the tools it loaded that were then called); the schema would ride in every request that announced the tool without it, at the rate each request paid for the start of its prompt.",
			Estimated: ta.sizeFrom != SizeRequest,
			Evidence:  evidence(ev),
		}
		adv.PerSessionUSD = saves / float64(len(ta.offered))
		adv.PerMonthUSD, adv.PerMonthSessions = a.monthly(perSession)
		a.r.Advice = append(a.r.Advice, adv)
	}
}

// trimFloat writes a share of round trips: 3, 2.5.
func trimFloat(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	return strings.TrimSuffix(s, ".0")
}

// neverUsed advises dropping the MCP servers, and the tools of servers
// otherwise used, that many sessions announced and none called.
func (a *adviser) neverUsed() {
	type server struct {
		name    string
		tools   []*toolAcross
		offered map[*Facts]bool
		calls   int
	}
	servers := map[string]*server{}
	var order []string
	for _, ta := range a.toolsAcross() {
		if ta.server == "" || len(ta.offered) == 0 {
			continue
		}
		s := servers[ta.server]
		if s == nil {
			s = &server{name: ta.server, offered: map[*Facts]bool{}}
			servers[ta.server] = s
			order = append(order, ta.server)
		}
		s.tools = append(s.tools, ta)
		s.calls += ta.calls
		for _, f := range ta.offered {
			s.offered[f] = true
		}
	}
	sort.Strings(order)
	for _, name := range order {
		s := servers[name]
		var unused []*toolAcross
		for _, ta := range s.tools {
			if ta.calls == 0 {
				unused = append(unused, ta)
			}
		}
		if len(unused) == 0 {
			continue
		}
		whole := s.calls == 0
		subject := "mcp__" + name
		if !whole {
			subject = fmt.Sprintf("mcp__%s (%d of %d tools)", name, len(unused), len(s.tools))
		}
		sessions := map[*Facts]bool{}
		for _, ta := range unused {
			for _, f := range ta.offered {
				sessions[f] = true
			}
		}
		if !a.enough(KindNeverUsed, subject, len(sessions)) {
			continue
		}
		var total float64
		var toks int64
		perSession := map[*Facts]float64{}
		// The requests that announced them, or sent them whole: per
		// session, the most any one of the tools was in.
		waitingIn, inlineIn := map[*Facts]int{}, map[*Facts]int{}
		var lines int64
		for _, ta := range unused {
			line := lineTokens(ta.name)
			lines += line
			for _, f := range inOrder(a.fs, ta.per) {
				t := ta.per[f]
				c := float64(line)*t.WaitingRate/1e6 + t.InlineUSD
				perSession[f] += c
				total += c
				toks += line*int64(t.Waiting) + t.InlineTokens
				waitingIn[f] = max(waitingIn[f], t.Waiting)
				inlineIn[f] = max(inlineIn[f], t.Inline)
			}
		}
		var inlineReqs, waitingReqs int
		for _, n := range waitingIn {
			waitingReqs += n
		}
		for _, n := range inlineIn {
			inlineReqs += n
		}
		var ev []Evidence
		for _, f := range inOrder(a.fs, sessions) {
			ev = append(ev, Evidence{Session: f.ID, Project: f.Project, USD: perSession[f]})
		}
		var toolNames []string
		for _, ta := range unused {
			toolNames = append(toolNames, ta.name)
		}
		adv := Advice{Kind: KindNeverUsed, Subject: subject, Sessions: len(sessions), Of: len(s.offered),
			SavesUSD: total, Tokens: toks, PerSessionUSD: total / float64(len(sessions)),
			Assumes:  "counts each tool's line in the catalog announcement (one token per 2.5 bytes of its name, an upper bound) in every request that announced it, and its whole schema in every request that sent it without a search, at the rate each request paid for the start of its prompt; a month is the 30 days up to the newest session read.",
			Evidence: evidence(ev),
		}
		if whole && signInOnly(toolNames) {
			adv.Title, adv.Do = signIn(name)
			adv.Why = fmt.Sprintf("%s announced only its sign-in tools (%s): the server was never signed in, so it loaded none of its own tools.", numfmt.Count(len(sessions), "session", "sessions"), strings.Join(toolNames, ", "))
		} else if whole {
			adv.Title, adv.Do = dropServer(name)
			adv.Why = fmt.Sprintf("%s announced its %s; none was ever called.", numfmt.Count(len(sessions), "session", "sessions"), numfmt.Count(len(s.tools), "tool", "tools"))
		} else {
			adv.Title = fmt.Sprintf("Turn off the %s MCP server's tools you never call", name)
			adv.Why = fmt.Sprintf("%s announced them; the server's other tools were called, these never were: %s.", numfmt.Count(len(sessions), "session", "sessions"), names(toolNames, 8))
			adv.Do = "If the server can be told which tools to offer (many take a list or a flag), leave these out; a permission deny rule keeps the model from calling a tool but may leave it in the catalog."
		}
		var parts []string
		if waitingReqs > 0 {
			parts = append(parts, fmt.Sprintf("their catalog lines (%s tokens) in up to %s requests that announced them", tokens(lines), numfmt.Thousands(int64(waitingReqs))))
		}
		if inlineReqs > 0 {
			parts = append(parts, fmt.Sprintf("their schemas in up to %s requests that sent them whole", numfmt.Thousands(int64(inlineReqs))))
		}
		adv.Figures = []string{fmt.Sprintf("%s: %s tokens, %s", strings.Join(parts, "; "), tokens(toks), usd(total))}
		adv.PerMonthUSD, adv.PerMonthSessions = a.monthly(perSession)
		a.r.Advice = append(a.r.Advice, adv)
	}
}

// signInTools are the tools Claude Code announces for an MCP server that
// needs signing in and was not signed in: its stand-ins until it is.
var signInTools = [...]string{"authenticate", "complete_authentication"}

// signInOnly reports whether every tool of names is a sign-in stand-in.
func signInOnly(names []string) bool {
	for _, n := range names {
		_, tool, _ := strings.Cut(strings.TrimPrefix(n, "mcp__"), "__")
		if !slices.Contains(signInTools[:], tool) {
			return false
		}
	}
	return len(names) > 0
}

// signIn says what to do with an MCP server never signed in: a claude.ai
// connector, or a server of the user's configuration.
func signIn(name string) (title, do string) {
	if c, ok := strings.CutPrefix(name, "claude_ai_"); ok {
		return fmt.Sprintf("The claude.ai connector %s was never signed in", c),
			fmt.Sprintf("Claude Code brings %q in from your claude.ai account's connectors and, until it is signed in, announces only its sign-in tools: sign in (/mcp) if you mean to use it from Claude Code, else disconnect it in claude.ai's connector settings. The figure is small: two catalog lines, not a server's tools.", c)
	}
	return fmt.Sprintf("The %s MCP server was never signed in", name),
		fmt.Sprintf("Until it is signed in, Claude Code announces only its sign-in tools: sign in (/mcp) if you mean to use it, else remove %q from your MCP configuration.", name)
}

// dropServer says what to do with an MCP server never used, by where its
// name says it comes from: a claude.ai connector (claude_ai_*), a
// plugin's server (plugin_PLUGIN_SERVER), one the Claude desktop app adds
// to its sessions, or the user's MCP configuration.
func dropServer(name string) (title, do string) {
	switch {
	case strings.HasPrefix(name, "claude_ai_"):
		c := strings.TrimPrefix(name, "claude_ai_")
		return fmt.Sprintf("Disconnect the claude.ai connector %s where you do not use it", c),
			fmt.Sprintf("Claude Code brings %q in from your claude.ai account's connectors, not from your MCP configuration: disconnect it in claude.ai's connector settings if you do not use it from Claude Code.", c)
	case strings.HasPrefix(name, "plugin_"):
		plugin, _, _ := strings.Cut(strings.TrimPrefix(name, "plugin_"), "_")
		return fmt.Sprintf("Disable the %s plugin where you do not use its MCP server", plugin),
			fmt.Sprintf("The server %s comes with the %q plugin: disable the plugin (/plugin) in the projects that do not use it.", name, plugin)
	case strings.HasPrefix(name, "ccd_") || name == "scheduled-tasks" || name == "mcp-registry":
		return fmt.Sprintf("The Claude desktop app's %s server is never used", name),
			"The Claude desktop app adds this server to its sessions; it is not in your MCP configuration, and the figure is what it costs you unless the app lets you turn it off."
	}
	return fmt.Sprintf("Drop the %s MCP server where you do not use it", name),
		fmt.Sprintf("Remove %q from the MCP configuration of the projects that do not need it (claude mcp remove %s, or its entry in the project's .mcp.json or in .claude.json in your home directory), or keep it out with --strict-mcp-config.", name, name)
}
