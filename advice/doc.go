// Package advice reads many sessions for what to change in a Claude Code
// setup, and what each change saves or costs in tokens and US dollars:
// tools to load up front, MCP servers and tools never used, tool searches
// that miss the tool they wanted, calls made before a schema was loaded,
// cache breaks by cause, and whether tool search pays.
//
// It works in two steps, so that many sessions can be read in parallel
// and their timelines dropped as soon as they are read:
//
//	facts := advice.Of(session, ref, advice.FactsOptions{Prices: prices}) // per session: small, plain values
//	result := advice.Advise(allFacts, advice.Options{MinSessions: 3})    // across them
//
// Of keeps only what the advice needs of a session (per tool, per failed
// search, per blind call and cache break, what deferral saved), priced at
// the table it is given; [Facts] are plain values that can be cached.
// Advise never advises from too little: a piece of advice rests on at
// least Options.MinSessions sessions, and says how many.
//
// The package is pure: it reads a timeline.Session and writes nothing
// (package gather reads sessions from disk into Facts, with a cache).
package advice
