package tooltokens

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/timeline"
)

// Counts maps a tool definition's hash (see [Hash]) to its size in tokens
// according to count_tokens answers.
type Counts map[string]int64

// CountTokens derives definition sizes from the capture's count_tokens
// exchanges: when two answered count_tokens requests have the same model,
// system prompt and messages and their tools differ by one definition, the
// difference of their input_tokens is that definition's size.
func CountTokens(exs []exchange.Exchange) Counts {
	type answer struct {
		tools  []string // definition hashes, sorted
		tokens int64
	}
	groups := map[string][]answer{}
	for i := range exs {
		ex := &exs[i]
		// Only count_tokens exchanges count: the others, long Messages
		// requests, are not decoded again here.
		if ex.Status != 200 || !strings.Contains(ex.URL, "count_tokens") {
			continue
		}
		d := decode.Decode(ex)
		if d.Request.Kind != decode.KindCountTokens || d.Response.Usage.InputTokens <= 0 {
			continue
		}
		a := answer{tokens: d.Response.Usage.InputTokens}
		for _, t := range d.Request.Tools {
			a.tools = append(a.tools, Hash(t.Raw))
		}
		sort.Strings(a.tools)
		groups[restKey(&d.Request)] = append(groups[restKey(&d.Request)], a)
	}
	out := Counts{}
	for _, as := range groups {
		for _, small := range as {
			for _, big := range as {
				if len(big.tools) != len(small.tools)+1 || big.tokens <= small.tokens {
					continue
				}
				extra, ok := oneMore(small.tools, big.tools)
				if !ok {
					continue
				}
				if _, seen := out[extra]; !seen {
					out[extra] = big.tokens - small.tokens
				}
			}
		}
	}
	return out
}

// restKey identifies everything of a count_tokens request but its tools.
func restKey(r *decode.Request) string {
	h := sha256.New()
	h.Write([]byte(r.Model))
	for _, s := range r.System {
		h.Write([]byte{0})
		h.Write([]byte(s.Text))
		h.Write(s.Raw)
	}
	for _, m := range r.Messages {
		h.Write([]byte{1})
		h.Write([]byte(m.Role))
		h.Write([]byte(m.Text))
		for _, b := range m.Blocks {
			h.Write([]byte{2})
			h.Write(timeline.CanonicalJSON(b.Raw))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// oneMore returns the one element of big (sorted) that small (sorted)
// lacks, when big is small plus that element.
func oneMore(small, big []string) (string, bool) {
	extra := ""
	i := 0
	for _, b := range big {
		if i < len(small) && small[i] == b {
			i++
			continue
		}
		if extra != "" {
			return "", false
		}
		extra = b
	}
	return extra, i == len(small) && extra != ""
}

// Hash is the hex SHA-256 of a definition's canonical JSON (keys sorted,
// no spaces, cache_control left out): two definitions with the same hash
// are the same.
func Hash(raw json.RawMessage) string {
	sum := sha256.Sum256(timeline.CanonicalJSON(raw))
	return hex.EncodeToString(sum[:])
}
