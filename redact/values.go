package redact

// Values redacts loose values that are not part of a report (what
// differs between two sessions, say) under one policy, with one set of
// pseudonyms for all of them: the same value gets the same pseudonym
// wherever it appears.
type Values struct {
	a *applier // nil under Off
}

// NewValues returns the redactor of policy p. known holds the sessions'
// own private values (from [Collect] or [CollectDecoded]); tools are the
// tool names the values may hold, whose MCP servers the strict policy
// numbers in this order.
func NewValues(p Policy, known *Known, tools []string) *Values {
	if p == Off {
		return &Values{}
	}
	a := &applier{s: newScrubber(known), strict: p == Strict, toolMemo: map[string]string{}}
	if a.strict {
		a.s.servers = map[string]string{}
		for _, n := range tools {
			if srv, _, ok := mcpParts(n); ok {
				a.s.addServer(srv)
			}
		}
	}
	return &Values{a: a}
}

// Text scrubs free text: paths, e-mail addresses, secrets, the sessions'
// private values and, under the strict policy, MCP server names.
func (v *Values) Text(t string) string {
	if v.a == nil {
		return t
	}
	return v.a.s.text(t)
}

// Tool passes a tool name that looks like one (its MCP server
// pseudonymised under the strict policy), or replaces it by a pseudonym.
func (v *Values) Tool(n string) string {
	if v.a == nil {
		return n
	}
	return v.a.tool(n)
}

// KeepQueries names the search queries of the sessions: FreeText keeps a
// quoted excerpt that is one of them (scrubbed), as a report keeps the
// queries its flag details quote.
func (v *Values) KeepQueries(qs []string) {
	if v.a != nil {
		v.a.queries = append(v.a.queries, qs...)
		v.a.s.freeMemo = nil // what FreeText made before did not know them
	}
}

// FreeText scrubs free text as a report's flag details are: every quoted
// excerpt is replaced by its length, unless it is a search query named by
// KeepQueries, a lower-case word or one of a few fixed phrases of the
// client, then the rest is scrubbed as Text does.
func (v *Values) FreeText(t string) string {
	if v.a == nil {
		return t
	}
	return v.a.freeText(t)
}

// Model passes a model ID as a report does: as it is, unless it holds a
// long number (an account, as in a Bedrock ARN) or a secret, or does not
// look like a model ID; then it is replaced by a pseudonym.
func (v *Values) Model(m string) string {
	if v.a == nil {
		return m
	}
	return v.a.model(m)
}
