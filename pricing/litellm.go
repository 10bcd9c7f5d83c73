package pricing

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// litellmEntry is one model of LiteLLM's model_prices_and_context_window.json
// (what ccusage and many other tools read): US dollars per token.
type litellmEntry struct {
	Input               *float64 `json:"input_cost_per_token"`
	Output              *float64 `json:"output_cost_per_token"`
	CacheWrite          *float64 `json:"cache_creation_input_token_cost"`
	CacheWrite1h        *float64 `json:"cache_creation_input_token_cost_above_1hr"`
	CacheRead           *float64 `json:"cache_read_input_token_cost"`
	InputAbove200k      *float64 `json:"input_cost_per_token_above_200k_tokens"`
	OutputAbove200k     *float64 `json:"output_cost_per_token_above_200k_tokens"`
	CacheWriteAbove200k *float64 `json:"cache_creation_input_token_cost_above_200k_tokens"`
	CacheWrite1hAbove   *float64 `json:"cache_creation_input_token_cost_above_1hr_above_200k_tokens"`
	CacheReadAbove200k  *float64 `json:"cache_read_input_token_cost_above_200k_tokens"`
	Provider            string   `json:"litellm_provider"`
	Mode                string   `json:"mode"`
	Specific            struct {
		Fast float64 `json:"fast"`
	} `json:"provider_specific_entry"`
}

// perM converts a per-token price to one per million tokens (0 for none).
func perM(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p * 1e6
}

// parseLiteLLM reads LiteLLM's form, doc: every key whose value has a
// token price becomes a model, named by its key; keys of routed providers
// ("vertex_ai/...", "bedrock/...") are left out, except "anthropic/". Of
// several keys naming one model once normalized ("claude-opus-4-6",
// "anthropic.claude-opus-4-6-v1"), the one already in normal form wins,
// and when their prices differ the one left out is named in a warning
// with its line. An entry whose prices are not numbers, or are negative,
// not finite or too large (see checkModel), is left out and named with its
// line too. Rates above 200K tokens become long-context rates: the whole
// request at them, as Anthropic's pricing page bills it (LiteLLM's readers
// differ on this; see docs/sessions.md).
func parseLiteLLM(doc []byte) (models []Model, warnings []string, err error) {
	top, err := objectMembers(doc, 0)
	if err != nil {
		return nil, nil, err
	}
	sort.SliceStable(top, func(i, j int) bool { return top[i].key < top[j].key })
	// The entries naming each model, in the order first seen.
	type entry struct {
		m    Model
		line int
	}
	byID := map[string]int{}
	var groups [][]entry
	// notes are the warnings with their lines, said in the file's order.
	type note struct {
		line int
		text string
	}
	var notes []note
	say := func(line int, format string, args ...any) {
		notes = append(notes, note{line, fmt.Sprintf("line %d: ", line) + fmt.Sprintf(format, args...)})
	}
	var out []Model
	bad := 0
	for _, mem := range top {
		k := mem.key
		if k == "sample_spec" || strings.Contains(strings.TrimPrefix(k, "anthropic/"), "/") {
			continue
		}
		var e litellmEntry
		if err := json.Unmarshal(mem.raw, &e); err != nil {
			bad++
			say(mem.line, "%s: left out: %s", k, litellmTypeError(err))
			continue
		}
		if e.Input == nil && e.Output == nil {
			continue
		}
		if e.Mode != "" && e.Mode != "chat" {
			continue
		}
		m := Model{Model: k, Source: "LiteLLM form", Fast: e.Specific.Fast,
			Rates: Rates{Input: perM(e.Input), Output: perM(e.Output), CacheWrite5m: perM(e.CacheWrite), CacheWrite1h: perM(e.CacheWrite1h), CacheRead: perM(e.CacheRead)}.fill()}
		if e.InputAbove200k != nil || e.OutputAbove200k != nil {
			lc := Rates{Input: perM(e.InputAbove200k), Output: perM(e.OutputAbove200k), CacheWrite5m: perM(e.CacheWriteAbove200k),
				CacheWrite1h: perM(e.CacheWrite1hAbove), CacheRead: perM(e.CacheReadAbove200k)}
			if lc.Input == 0 {
				lc.Input = m.Input
			}
			if lc.Output == 0 {
				lc.Output = m.Output
			}
			m.LongContext = &LongContext{AboveInputTokens: 200000, Rates: lc.fill()}
		}
		if err := checkModel(m); err != nil {
			bad++
			say(mem.line, "%s: left out: %v", k, err)
			continue
		}
		n := Normalize(k)
		m.Family, _ = familyVersion(n)
		if _, ok := byID[n]; !ok {
			byID[n] = len(groups)
			groups = append(groups, nil)
		}
		groups[byID[n]] = append(groups[byID[n]], entry{m, mem.line})
	}
	for _, g := range groups {
		win := 0
		for i, e := range g {
			if Normalize(e.m.Model) == e.m.Model {
				win = i
				break
			}
		}
		for i, e := range g {
			if i != win && !samePrices(e.m, g[win].m) {
				say(e.line, "%s: priced twice, as %s at line %d too, at other rates; the one at line %d counts",
					e.m.Model, g[win].m.Model, g[win].line, g[win].line)
			}
		}
		out = append(out, g[win].m)
	}
	sort.SliceStable(notes, func(i, j int) bool { return notes[i].line < notes[j].line })
	for _, n := range notes {
		warnings = append(warnings, n.text)
	}
	if len(out) == 0 {
		if bad > 0 {
			return nil, nil, fmt.Errorf("no model with a price (%d entries could not be read: %s)", bad, strings.Join(warnings, "; "))
		}
		return nil, nil, errors.New("neither a tsinspect table (no \"models\") nor LiteLLM's form (no entry with input_cost_per_token)")
	}
	return out, warnings, nil
}

// litellmTypeError says which field of an entry had the wrong type.
func litellmTypeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s: want a %s, not a %s", te.Field, te.Type, te.Value)
	}
	return err.Error()
}

// samePrices reports whether two entries of one model price alike.
func samePrices(a, b Model) bool {
	same := a.Rates == b.Rates && a.Fast == b.Fast && (a.LongContext == nil) == (b.LongContext == nil)
	return same && (a.LongContext == nil || *a.LongContext == *b.LongContext)
}
