package pricing

import (
	"strconv"
	"strings"
	"sync"
	"time"
)

// Price is what [Table.Lookup] found for a model ID.
type Price struct {
	Model
	// Estimated is true when the ID is not in the table and was priced as
	// Model.Model, its nearest neighbour (marked ≈ wherever it shows).
	Estimated bool
}

// NotAModel reports whether id names no model at all: empty, or the
// "<synthetic>" Claude Code writes on the messages it makes up itself (an
// API error, an interrupted request), which were never billed.
func NotAModel(id string) bool {
	id = strings.TrimSpace(id)
	return id == "" || id == "<synthetic>"
}

// regions are the cross-region inference prefixes of Bedrock model IDs.
var regions = []string{"us.", "eu.", "apac.", "global.", "jp.", "au.", "ca.", "us-gov."}

// Normalize reduces a model ID to the name the price table uses: lower
// case, without a provider's prefix ("us.anthropic.", "anthropic.",
// "anthropic/"), a context suffix ("[1m]"), a Vertex version
// ("@20250929"), a Bedrock version ("-v1:0", "-v2"), a date suffix
// ("-20250929") or "-latest". Anything else stays, so that a longer ID
// never matches a shorter entry.
func Normalize(id string) string {
	id = strings.ToLower(strings.TrimSpace(id))
	if i := strings.IndexByte(id, '['); i > 0 && strings.HasSuffix(id, "]") {
		id = id[:i]
	}
	if i := strings.IndexByte(id, '@'); i > 0 {
		id = id[:i]
	}
	for _, r := range regions {
		if rest, ok := strings.CutPrefix(id, r); ok && strings.HasPrefix(rest, "anthropic.") {
			id = rest
			break
		}
	}
	id = strings.TrimPrefix(id, "anthropic.")
	id = strings.TrimPrefix(id, "anthropic/")
	id = trimBedrockVersion(id)
	if i := strings.LastIndexByte(id, '-'); i > 0 && len(id)-i-1 == 8 && digits(id[i+1:]) {
		id = id[:i]
	}
	id = strings.TrimSuffix(id, "-latest")
	return id
}

// trimBedrockVersion removes a trailing "-v<N>" or "-v<N>:<M>".
func trimBedrockVersion(id string) string {
	i := strings.LastIndex(id, "-v")
	if i <= 0 {
		return id
	}
	v := id[i+2:]
	major, minor, hasMinor := strings.Cut(v, ":")
	if !digits(major) || hasMinor && !digits(minor) {
		return id
	}
	return id[:i]
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// families are the Claude model families the table knows.
var families = []string{"opus", "sonnet", "haiku", "fable", "mythos"}

// familyVersion reads a normalized Claude model ID's family and version
// ("claude-opus-4-6": opus, 406; "claude-3-5-sonnet": sonnet, 305;
// "claude-opus-4.6-thinking": opus, 406). version is -1 when the ID has
// no number; family is "" for an ID that is not a Claude model of a known
// family.
func familyVersion(id string) (family string, version int) {
	if !strings.HasPrefix(id, "claude-") {
		return "", -1
	}
	parts := strings.FieldsFunc(id[len("claude-"):], func(r rune) bool { return r == '-' || r == '.' || r == '_' })
	var nums []int
	for _, p := range parts {
		if contains(families, p) && family == "" {
			family = p
			continue
		}
		if len(p) <= 2 && digits(p) && len(nums) < 2 {
			n, _ := strconv.Atoi(p)
			nums = append(nums, n)
		}
	}
	switch len(nums) {
	case 0:
		version = -1
	case 1:
		version = nums[0] * 100
	default:
		version = nums[0]*100 + nums[1]
	}
	return family, version
}

// day is the UTC date of at, as the table's Until dates are written.
func day(at time.Time) string {
	if at.IsZero() {
		return ""
	}
	return at.UTC().Format(time.DateOnly)
}

// inForce reports whether entry m prices a request made at at: an entry
// with no Until prices everything from the last dated entry's end on, a
// dated one the requests before its Until. A zero at is "now".
func inForce(m Model, at time.Time) bool {
	d := day(at)
	if m.Until == "" {
		return true
	}
	return d != "" && d < m.Until
}

// pick returns the entry among cands (all of one model) that prices a
// request at at: the dated entry with the earliest Until after it, else
// the undated one.
func pick(cands []Model, at time.Time) (Model, bool) {
	var best Model
	found := false
	for _, m := range cands {
		if m.Until == "" || !inForce(m, at) {
			continue
		}
		if !found || m.Until < best.Until {
			best, found = m, true
		}
	}
	if found {
		return best, true
	}
	for _, m := range cands {
		if m.Until == "" {
			return m, true
		}
	}
	return Model{}, false
}

// Lookup finds the price in force today of a model ID (see [Table.LookupAt]).
func (t *Table) Lookup(id string) (Price, bool) { return t.LookupAt(id, time.Time{}) }

// LookupAt finds the price of a model ID for a request made at at (zero:
// now). The ID matches a table entry or one of its aliases exactly, once
// [Normalize]d; an entry never matches a longer ID ("claude-opus-4" does
// not price "claude-opus-4-6"). A Claude model of a known family that no
// entry names is priced as its neighbour (Estimated): the entry of the
// same family and version when the ID only adds to its name
// ("claude-opus-4-6-thinking"), else the newest entry of the family older
// than the ID, else the oldest newer one. Anything else, a model of
// another vendor, "<synthetic>" or an unknown Claude family, has no price.
func (t *Table) LookupAt(id string, at time.Time) (Price, bool) {
	r := t.resolve(id)
	if m, ok := pick(r.own, at); ok {
		return Price{Model: m}, true
	}
	if !r.near {
		return Price{}, false
	}
	// The neighbour's own dated entries apply to the request's date.
	m, _ := pick(r.neighbour, at)
	return Price{Model: m, Estimated: true}, true
}

// resolved is what LookupAt finds for a model ID whatever the date, for
// pick to choose between by the request's date: the entries that are the
// ID's own, and those of the neighbour that stands in for it (near: there
// is one) when none of its own is in force.
type resolved struct {
	own, neighbour []Model
	near           bool
}

// lookupMemo keeps, for one Table, what resolve found for each model ID
// (a listing prices every answer of every session by a few IDs): the
// table's Models it was found in, so that a table whose models were
// replaced since is looked up afresh.
type lookupMemo struct {
	mu     sync.Mutex
	models []Model
	byID   map[string]resolved
}

// resolve is findModel through the table's memo, when it has one.
func (t *Table) resolve(id string) resolved {
	mm := t.memo
	if mm == nil {
		return t.findModel(id)
	}
	mm.mu.Lock()
	defer mm.mu.Unlock()
	if len(mm.models) != len(t.Models) || len(t.Models) > 0 && &mm.models[0] != &t.Models[0] {
		mm.models, mm.byID = t.Models, map[string]resolved{}
	}
	r, ok := mm.byID[id]
	if !ok {
		r = t.findModel(id)
		mm.byID[id] = r
	}
	return r
}

// findModel finds the entries that price id: its own (by its normalized
// ID or an alias), and the neighbour of its family that stands in when
// none of them is in force: the same version, the nearest older, or the
// nearest newer.
func (t *Table) findModel(id string) resolved {
	var r resolved
	if NotAModel(id) {
		return r
	}
	n := Normalize(id)
	for _, m := range t.Models {
		if Normalize(m.Model) == n || containsNormalized(m.Aliases, n) {
			r.own = append(r.own, m)
		}
	}
	fam, ver := familyVersion(n)
	if fam == "" || ver < 0 {
		return r
	}
	var same, older, newer *Model
	var olderV, newerV int
	for i := range t.Models {
		m := &t.Models[i]
		if m.Until != "" {
			// A dated entry stands in only through its undated sibling;
			// pick chooses between them for the date below.
			continue
		}
		f, v := familyVersion(Normalize(m.Model))
		if f != fam || v < 0 {
			continue
		}
		switch {
		case v == ver:
			if same == nil {
				same = m
			}
		case v < ver && (older == nil || v > olderV):
			older, olderV = m, v
		case v > ver && (newer == nil || v < newerV):
			newer, newerV = m, v
		}
	}
	chosen := same
	if chosen == nil {
		chosen = older
	}
	if chosen == nil {
		chosen = newer
	}
	if chosen == nil {
		return r
	}
	for _, m := range t.Models {
		if m.Model == chosen.Model {
			r.neighbour = append(r.neighbour, m)
		}
	}
	r.near = true
	return r
}

func containsNormalized(ids []string, n string) bool {
	for _, a := range ids {
		if Normalize(a) == n {
			return true
		}
	}
	return false
}
