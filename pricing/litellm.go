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

// parseLiteLLM reads LiteLLM's form: every key whose value has a token
// price becomes a model, named by its key; keys of routed providers
// ("vertex_ai/...", "bedrock/...") are left out, except "anthropic/". Of
// several keys naming one model once normalized ("claude-opus-4-6",
// "anthropic.claude-opus-4-6-v1"), the one already in normal form wins.
// Rates above 200K tokens become long-context rates: the whole request at
// them, as Anthropic's pricing page bills it (LiteLLM's readers differ on
// this; see docs/sessions.md).
func parseLiteLLM(top map[string]json.RawMessage) ([]Model, error) {
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	byID := map[string]int{}
	var out []Model
	bad := 0
	for _, k := range keys {
		if k == "sample_spec" || strings.Contains(strings.TrimPrefix(k, "anthropic/"), "/") {
			continue
		}
		var e litellmEntry
		if err := json.Unmarshal(top[k], &e); err != nil {
			bad++
			continue
		}
		if e.Input == nil && e.Output == nil {
			continue
		}
		if e.Mode != "" && e.Mode != "chat" {
			continue
		}
		for _, p := range []*float64{e.Input, e.Output, e.CacheWrite, e.CacheWrite1h, e.CacheRead, e.InputAbove200k, e.OutputAbove200k, e.CacheWriteAbove200k, e.CacheWrite1hAbove, e.CacheReadAbove200k} {
			if p != nil && *p < 0 {
				return nil, fmt.Errorf("%s: negative price", k)
			}
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
		n := Normalize(k)
		m.Family, _ = familyVersion(n)
		if i, ok := byID[n]; ok {
			if Normalize(out[i].Model) != out[i].Model && k == n {
				out[i] = m
			}
			continue
		}
		byID[n] = len(out)
		out = append(out, m)
	}
	if len(out) == 0 {
		if bad > 0 {
			return nil, fmt.Errorf("no model with a price (%d entries could not be read)", bad)
		}
		return nil, errors.New("neither a tsinspect table (no \"models\") nor LiteLLM's form (no entry with input_cost_per_token)")
	}
	return out, nil
}
