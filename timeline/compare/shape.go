package compare

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tsinspect/tsinspect/timeline"
)

// shape is what a thread's requests look like: its first request's
// client, model, betas, system blocks, announcement and parameters, and
// the first definition of every tool and every catalog name any of its
// requests sent.
type shape struct {
	client, model string
	betas         []string
	system        []sysBlock
	tools         map[string]json.RawMessage
	deferred      map[string]bool // tools sent with defer_loading
	toolOrder     []string
	catalog       []string
	announcement  string // the first announcement's form, "" when none
	annBytes      int
	params        map[string]string
	rate          float64 // tokens per byte of the first request
	rateOK        bool
}

type sysBlock struct {
	text string // the billing header reduced to what does not change per request
	key  string // text and cache_control
}

func shapeOf(th *timeline.Thread, s *timeline.Session) *shape {
	var sh *shape
	catalog := map[string]bool{}
	est := timeline.NewEstimates()
	for _, i := range th.Turns {
		t := s.Turn(i)
		if !isMessages(t) {
			continue
		}
		d := t.Decoded
		if sh == nil {
			sh = firstShape(t)
			sh.rate, sh.rateOK = est.PromptRate(d)
		}
		for _, tool := range d.Request.Tools {
			if _, ok := sh.tools[tool.Name]; !ok {
				sh.tools[tool.Name] = tool.Raw
				if tool.DeferLoading {
					sh.deferred[tool.Name] = true
				}
				sh.toolOrder = append(sh.toolOrder, tool.Name)
			}
		}
		for _, n := range d.Catalog {
			catalog[n] = true
		}
	}
	if sh == nil {
		return nil
	}
	for n := range catalog {
		sh.catalog = append(sh.catalog, n)
	}
	sort.Strings(sh.catalog)
	return sh
}

func firstShape(t *timeline.Turn) *shape {
	d := t.Decoded
	r := &d.Request
	sh := &shape{client: t.Client.String(), model: r.Model, tools: map[string]json.RawMessage{}, deferred: map[string]bool{}, params: map[string]string{}}
	sh.betas = append(append(sh.betas, r.Betas...), r.BodyBetas...)
	for _, b := range r.System {
		text := b.Text
		if strings.HasPrefix(text, timeline.BillingPrefix) {
			text = billing(text)
		}
		sh.system = append(sh.system, sysBlock{text: text, key: text + "\x00" + cacheControl(b.Raw)})
	}
	for _, ev := range d.CatalogEvents {
		if !ev.Remove && ev.Form != "tools" {
			sh.announcement, sh.annBytes = ev.Form, ev.Len
			break
		}
	}
	sh.params["max_tokens"] = fmt.Sprint(r.MaxTokens)
	sh.params["stream"] = fmt.Sprint(r.Stream)
	if len(r.StopSequences) > 0 {
		sh.params["stop_sequences"] = fmt.Sprintf("%q", r.StopSequences)
	}
	if len(r.Diagnostics) > 0 {
		sh.params["diagnostics"] = "sent" // its value names the previous message: an id
	}
	for k, v := range r.Other {
		sh.params[k] = string(timeline.CanonicalJSON(v))
	}
	return sh
}

// billing keeps the parts of a billing header that do not change from one
// request to the next: cc_entrypoint (cc_version is the client's; the
// rest, such as cch, is per request).
func billing(text string) string {
	var keep []string
	for _, part := range strings.Split(strings.TrimPrefix(text, timeline.BillingPrefix), ";") {
		part = strings.TrimSpace(part)
		if strings.HasPrefix(part, "cc_entrypoint=") {
			keep = append(keep, part)
		}
	}
	return timeline.BillingPrefix + " " + strings.Join(keep, "; ")
}

// cacheControl is a block's cache_control, keys sorted, "" when it has
// none.
func cacheControl(raw json.RawMessage) string {
	var b struct {
		CacheControl json.RawMessage `json:"cache_control"`
	}
	if json.Unmarshal(raw, &b) != nil || len(b.CacheControl) == 0 {
		return ""
	}
	return string(timeline.CanonicalJSON(b.CacheControl))
}

// shapeChanges compares the requests of a thread pair.
func shapeChanges(p threadPair, sa, sb *timeline.Session) []Change {
	a, b := shapeOf(p.a, sa), shapeOf(p.b, sb)
	if a == nil || b == nil {
		return nil
	}
	name := []string{pairName(p)}
	var out []Change
	add := func(c Change) {
		c.Threads = name
		out = append(out, c)
	}
	if a.client != b.client {
		add(Change{Area: AreaClient, Item: "client", Op: "changed", A: a.client, B: b.client})
	}
	if a.model != b.model {
		add(Change{Area: AreaModel, Item: "model", Op: "changed", A: a.model, B: b.model})
	}
	for _, x := range a.betas {
		if !slices.Contains(b.betas, x) {
			add(Change{Area: AreaBetas, Item: x, Op: "removed"})
		}
	}
	for _, x := range b.betas {
		if !slices.Contains(a.betas, x) {
			add(Change{Area: AreaBetas, Item: x, Op: "added"})
		}
	}
	for _, c := range systemChanges(a, b) {
		add(c)
	}
	for _, c := range toolChanges(a, b) {
		add(c)
	}
	if added, removed := timeline.SetDiff(a.catalog, b.catalog); len(added)+len(removed) > 0 {
		add(Change{Area: AreaCatalog, Item: "catalog", Op: "changed", A: fmt.Sprintf("%d tools", len(a.catalog)),
			B: fmt.Sprintf("%d tools", len(b.catalog)), Detail: strings.TrimSuffix(strings.TrimPrefix(changeText(added, removed), " ("), ")"),
			Added: added, Removed: removed})
	}
	switch {
	case a.announcement != b.announcement:
		add(Change{Area: AreaAnnouncement, Item: "form", Op: "changed", A: orNone(a.announcement), B: orNone(b.announcement)})
	case a.annBytes != b.annBytes && slices.Equal(a.catalog, b.catalog):
		add(Change{Area: AreaAnnouncement, Item: "text", Op: "changed", A: fmt.Sprintf("%d bytes", a.annBytes),
			B: fmt.Sprintf("%d bytes", b.annBytes), Detail: signedThousands(int64(b.annBytes-a.annBytes)) + " bytes, same names"})
	}
	keys := map[string]bool{}
	for k := range a.params {
		keys[k] = true
	}
	for k := range b.params {
		keys[k] = true
	}
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		x, okx := a.params[k]
		y, oky := b.params[k]
		switch {
		case !okx:
			add(Change{Area: AreaParams, Item: k, Op: "added", B: short(y)})
		case !oky:
			add(Change{Area: AreaParams, Item: k, Op: "removed", A: short(x)})
		case x != y:
			add(Change{Area: AreaParams, Item: k, Op: "changed", A: short(x), B: short(y)})
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// short cuts a value to what a line can show.
func short(s string) string {
	const max = 72
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

// tokens is n bytes at the shape's rate, with the estimate's mark.
func (sh *shape) tokens(n int) string {
	t := timeline.Tokens(abs(n), sh.rate)
	if n < 0 {
		t = -t
	}
	return signedThousands(t) + " tokens ≈"
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// systemChanges pairs the system blocks of a and b: identical blocks
// first, in order; then blocks of the same text (their cache_control
// apart); what is left in order as changed, a billing header only with a
// billing header; the rest added or removed.
func systemChanges(a, b *shape) []Change {
	matchA := make([]int, len(a.system))
	usedB := make([]bool, len(b.system))
	for i := range matchA {
		matchA[i] = -1
	}
	pass := func(same func(x, y sysBlock) bool) {
		next := 0
		for i, x := range a.system {
			if matchA[i] >= 0 {
				continue
			}
			for j := next; j < len(b.system); j++ {
				if !usedB[j] && same(x, b.system[j]) {
					usedB[j], matchA[i], next = true, j, j+1
					break
				}
			}
		}
	}
	billing := func(x sysBlock) bool { return strings.HasPrefix(x.text, timeline.BillingPrefix) }
	pass(func(x, y sysBlock) bool { return x.key == y.key })
	pass(func(x, y sysBlock) bool { return x.text == y.text })
	pass(func(x, y sysBlock) bool { return billing(x) == billing(y) })
	var out []Change
	for i, j := range matchA {
		if j < 0 {
			out = append(out, Change{Area: AreaSystem, Item: fmt.Sprintf("block %d", i), Op: "removed",
				Detail: a.tokens(-len(a.system[i].text))})
			continue
		}
		x, y := a.system[i], b.system[j]
		if x.key == y.key {
			continue
		}
		var what []string
		if x.text != y.text {
			what = append(what, "text "+b.tokens(len(y.text)-len(x.text)))
		}
		if xc, yc := strings.SplitN(x.key, "\x00", 2)[1], strings.SplitN(y.key, "\x00", 2)[1]; xc != yc {
			what = append(what, fmt.Sprintf("cache_control %s → %s", orNone(xc), orNone(yc)))
		}
		item := fmt.Sprintf("block %d", j)
		if i != j {
			item = fmt.Sprintf("block %d (A's %d)", j, i)
		}
		out = append(out, Change{Area: AreaSystem, Item: item, Op: "changed", Detail: strings.Join(what, "; "), Lines: lineDiff(x.text, y.text)})
	}
	for j, u := range usedB {
		if !u {
			out = append(out, Change{Area: AreaSystem, Item: fmt.Sprintf("block %d", j), Op: "added",
				Detail: b.tokens(len(b.system[j].text))})
		}
	}
	return out
}

// toolChanges compares the tool definitions of a and b by name; for a
// changed one it says what changed: its description, its schema, or
// another field. A deferred tool one side sent and the other did not was
// loaded on one side only: the turns' working sets show that.
func toolChanges(a, b *shape) []Change {
	var out []Change
	for _, n := range a.toolOrder {
		if _, ok := b.tools[n]; !ok && !a.deferred[n] {
			out = append(out, Change{Area: AreaTools, Item: n, Op: "removed"})
		}
	}
	for _, n := range b.toolOrder {
		x, ok := a.tools[n]
		if !ok {
			if !b.deferred[n] {
				out = append(out, Change{Area: AreaTools, Item: n, Op: "added"})
			}
			continue
		}
		y := b.tools[n]
		if string(timeline.CanonicalJSON(x)) == string(timeline.CanonicalJSON(y)) {
			continue
		}
		var mx, my map[string]json.RawMessage
		if json.Unmarshal(x, &mx) != nil || json.Unmarshal(y, &my) != nil {
			out = append(out, Change{Area: AreaTools, Item: n, Op: "changed"})
			continue
		}
		keys := map[string]bool{}
		for k := range mx {
			keys[k] = true
		}
		for k := range my {
			keys[k] = true
		}
		var what, lines []string
		var ks []string
		for k := range keys {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			if k == "cache_control" || string(timeline.CanonicalJSON(mx[k])) == string(timeline.CanonicalJSON(my[k])) {
				continue
			}
			w := k
			switch k {
			case "input_schema":
				w = "schema"
			case "description":
				w = "description " + b.tokens(len(my[k])-len(mx[k]))
				var dx, dy string
				if json.Unmarshal(mx[k], &dx) == nil && json.Unmarshal(my[k], &dy) == nil {
					lines = lineDiff(dx, dy)
				}
			}
			what = append(what, w)
		}
		if len(what) == 0 {
			continue
		}
		out = append(out, Change{Area: AreaTools, Item: n, Op: "changed", Detail: strings.Join(what, ", "), Lines: lines})
	}
	return out
}
