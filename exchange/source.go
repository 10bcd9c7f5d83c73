package exchange

import (
	"fmt"
	"strings"

	"github.com/tsinspect/tsinspect/internal/numfmt"
)

// Sources of exchanges that were not recorded through the proxy: the
// importers of formats that keep parsed headers and bodies (claude-trace,
// mitmproxy flows, VCR cassettes, claude-tap, Claude Code's raw-bodies
// directories) and record's bodies mode. The proxy's own are its mode
// ("mitm", "reverse"), a packet capture's "import:pcap" and a HAR's
// "import:har".
const (
	SourceClaudeTrace = "import:claude-trace"
	SourceRawBodies   = "import:raw-bodies"
	SourceRecordBody  = "bodies"
	SourceMitmproxy   = "import:mitmproxy"
	SourceVCR         = "import:vcr"
	SourceClaudeTap   = "import:claude-tap"
	// SourceSessionFile: Claude Code's own session files (package
	// sessionfiles), read in place or imported.
	SourceSessionFile = "session-file"
	// SourceTranscript: a request made from the transcript of Claude
	// Code's session files, which hold no record of the request itself
	// (releases before 2.1.300, or the records were off): its messages as
	// the transcript holds them, its answer, and no system prompt, tools
	// or parameters.
	SourceTranscript = "session-transcript"
)

// TranscriptMember is the top-level member of a request body tsinspect
// made from the transcript of Claude Code's session files (Source
// SourceTranscript): it says so, whether the release wrote the deferred-
// tool catalog ("catalog_recorded") and the tools a compaction kept loaded
// ("loaded_before_compaction"). It is never sent to an API.
const TranscriptMember = "tsinspect_transcript"

// QuerySourceHeader is the request header an importer keeps Claude Code's
// query_source in (sdk, repl_main_thread, an agent's name, compact...),
// when the format tells it: Claude Code does not send it on the wire.
const QuerySourceHeader = "X-Tsinspect-Query-Source"

// SessionHeader is the request header Claude Code sends its session id in;
// importers of formats that keep the id elsewhere put it there.
const SessionHeader = "X-Claude-Code-Session-Id"

// Limits says, for an exchange Source, what the recorded format lacks
// compared with a live recording: each item one short phrase. It returns nil
// for sources that keep everything.
func Limits(source string) []string {
	switch source {
	case SourceClaudeTrace:
		return []string{"no SSE timing (each response arrives as one chunk)", "request bodies re-serialised (not byte-exact)", "response headers as logged"}
	case SourceRawBodies, SourceRecordBody:
		return []string{"no HTTP headers or status (a written response counts as 200)", "no SSE timing: the response is Claude Code's final message, not the stream",
			"bodies re-serialised (not byte-exact)", "thinking may be redacted by Claude Code", "failed or retried attempts have no response"}
	case SourceMitmproxy:
		return []string{"no SSE timing (each response arrives as one chunk)"}
	case SourceVCR:
		return []string{"no timing (cassettes keep no times, or one per interaction)", "bodies may be re-serialised (parsed_body, YAML)", "recorders usually filter credentials and some headers"}
	case SourceSessionFile:
		return []string{"no HTTP headers: betas, session and release as the files give them", "no SSE timing: each answer is Claude Code's final message",
			"no billing-header system block, metadata or stream flag", "an empty reply's stop reason and usage are not written", "a cut stream shows as its connection error, without what arrived",
			"requests Claude Code does not write (token counts, side traffic) are absent"}
	case SourceTranscript:
		return []string{"no request: the system prompt, the tools (so the working set beyond the deferred tools loaded) and the parameters are not in the transcript; its messages are rebuilt from it",
			"no HTTP headers or SSE timing", "an empty reply's stop reason and usage are not written", "a failed request shows as the error Claude Code wrote"}
	case SourceClaudeTap:
		return []string{"no SSE timing: streams are rebuilt from the recorded events", "bodies re-serialised (not byte-exact)", "credential headers redacted by claude-tap"}
	}
	return nil
}

// SourcePhrase says where exchanges of source came from, as a verb and
// its object: "imported from" "har", "recorded in mode" "mitm", "made
// from" "Claude Code's transcript".
func SourcePhrase(source string) (verb, what string) {
	switch {
	case source == SourceSessionFile:
		return "rebuilt from", "Claude Code's request records"
	case source == SourceTranscript:
		return "made from", "Claude Code's transcript"
	case strings.HasPrefix(source, "import:"):
		return "imported from", strings.TrimPrefix(source, "import:")
	}
	return "recorded in mode", source
}

// SourceLimits says, for each source among sources whose format keeps
// less than a recording, how many exchanges came from it and what they
// lack, one line each, in order of first appearance.
func SourceLimits(sources []string) []string {
	n := map[string]int{}
	var order []string
	for _, s := range sources {
		if Limits(s) == nil {
			continue
		}
		if n[s] == 0 {
			order = append(order, s)
		}
		n[s]++
	}
	var out []string
	for _, s := range order {
		verb, what := SourcePhrase(s)
		out = append(out, fmt.Sprintf("%s %s %s lack: %s", numfmt.Count(n[s], "exchange", "exchanges"), verb, what, strings.Join(Limits(s), "; ")))
	}
	return out
}
