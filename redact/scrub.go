package redact

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
)

// Pseudonym classes. A pseudonym reads "[class-N]", N counting the
// distinct values of that class in one report from 1.
const (
	classEmail  = "email"
	classPath   = "path"
	classIP     = "ip"
	classHost   = "host"
	classURL    = "url"
	classSecret = "secret"
	classID     = "id"
	classUser   = "user"
	classTool   = "tool"
	classModel  = "model"
	classThread = "thread"
)

// apiHost is the one host name reports keep.
const apiHost = "api.anthropic.com"

// pattern is one kind of private value found by its shape.
type pattern struct {
	class string
	re    *regexp.Regexp
	// group is the submatch replaced (0: the whole match); the rest of the
	// match is kept.
	group int
	// keep, when set, vetoes a match (a false positive).
	keep func(string) bool
}

// patterns lists the shapes, in the order they are applied: the more
// specific first, so that a key inside a URL is not taken for a path.
func patterns() []pattern {
	return []pattern{
		{class: classSecret, re: regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`)},
		{class: classURL, re: regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.\-]{1,15}://[^\s"'<>\x60]+`), keep: isAPIURL},
		{class: classEmail, re: regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}`)},
		{class: classSecret, re: regexp.MustCompile(`\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{8,}`)},
		{class: classSecret, re: regexp.MustCompile(`\b(?:ghp|gho|ghu|ghs|ghr|github_pat|glpat|xox[abposr])[_\-][A-Za-z0-9_\-]{10,}`)},
		{class: classSecret, re: regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},
		{class: classSecret, re: regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{30,}`)},
		{class: classSecret, re: regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-]{6,}`)},
		{class: classSecret, re: regexp.MustCompile(`(?i)\b(?:bearer|basic)\s+([A-Za-z0-9._~+/=\-]{8,})`), group: 1, keep: notToken},
		{class: classSecret, re: regexp.MustCompile(`(?i)\b(?:[A-Za-z0-9]+[_\-])*(?:api[_\-]?key|apikey|token|secret|passw(?:or)?d|pwd|credentials?|session[_\-]?id|auth|authorization|cookie)\b\\?"?\s*[:=]\s*\\?"?([^\s"'\\,;&}]{4,})`), group: 1, keep: isScheme},
		{class: classID, re: regexp.MustCompile(`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`)},
		{class: classSecret, re: regexp.MustCompile(`\b[0-9a-fA-F]{24,}\b`)},
		{class: classSecret, re: regexp.MustCompile(`[A-Za-z0-9+/_\-]{32,}={0,2}`), keep: notSecretish},
		{class: classID, re: regexp.MustCompile(`[A-Za-z0-9_\-]{8,}`), keep: notIdentifier},
		{class: classPath, re: regexp.MustCompile(`(?:^|[\s"'(=:,;\[{<>\x60])((?:~[A-Za-z0-9._\-]*)?/[^\s"'<>|,;(){}\x60]*[^\s"'<>|,;(){}\x60.:!?])`), group: 1, keep: isAPIPath},
		{class: classPath, re: regexp.MustCompile(`\b[A-Za-z]:\\[^\s"'<>|,;]+`)},
		{class: classPath, re: regexp.MustCompile(`\\\\[A-Za-z0-9._\-]+\\[^\s"'<>|,;]+`)},
		{class: classIP, re: regexp.MustCompile(`\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?::\d{1,5})?\b`)},
		{class: classIP, re: regexp.MustCompile(`(?i)\b(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}\b|\b(?:[0-9a-f]{1,4}:){1,7}:(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){0,6})?|::(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4}\b`), keep: notIPv6},
		{class: classHost, re: regexp.MustCompile(`\b(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}\b`), keep: notHost},
	}
}

// isAPIURL keeps URLs of the Anthropic API.
func isAPIURL(u string) bool {
	rest := u[strings.Index(u, "://")+3:]
	host := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		host = rest[:i]
	}
	return (strings.EqualFold(host, apiHost) || strings.EqualFold(host, "docs.anthropic.com") ||
		strings.EqualFold(host, "docs.claude.com")) && !strings.ContainsAny(rest, "?#@")
}

// notToken vetoes "Bearer word" where the word is not a credential.
func notToken(s string) bool {
	return !strings.ContainsAny(s, "0123456789") && len(s) < 20
}

// isScheme keeps the scheme word of "Authorization: Bearer ...", whose
// token the bearer pattern has replaced already.
func isScheme(s string) bool {
	return strings.EqualFold(s, "bearer") || strings.EqualFold(s, "basic")
}

// isAPIPath keeps the API's own paths (/v1/messages, ...).
func isAPIPath(p string) bool {
	return p == "/v1" || strings.HasPrefix(p, "/v1/") && !strings.Contains(p, "@") && len(p) < 64
}

// notSecretish vetoes long runs that look like identifiers rather than
// random secrets: MCP tool names, snake_case words.
func notSecretish(s string) bool {
	s = strings.TrimRight(s, "=")
	if strings.Contains(s, "__") {
		return true
	}
	var upper, lower, digit, sep int
	for _, c := range s {
		switch {
		case c >= 'A' && c <= 'Z':
			upper++
		case c >= 'a' && c <= 'z':
			lower++
		case c >= '0' && c <= '9':
			digit++
		default:
			sep++
		}
	}
	if sep*10 > len(s) {
		return true
	}
	classes := 0
	for _, n := range []int{upper, lower, digit} {
		if n > 0 {
			classes++
		}
	}
	if classes < 2 || digit == 0 && (upper == 0 || lower == 0) {
		return true
	}
	return entropy(s) < 3.5
}

// notIdentifier vetoes words that do not look like account, organisation
// or request identifiers: an identifier mixes letters and digits, with a
// letter next to a digit at least twice (cnry28org, req_01AbC9...), and is
// neither an MCP tool name nor a model name.
func notIdentifier(s string) bool {
	if strings.Contains(s, "__") || strings.HasPrefix(s, "claude-") {
		return true
	}
	var letters, digits, turns int
	prev := 0 // 1 letter, 2 digit
	for _, c := range s {
		kind := 0
		switch {
		case c >= '0' && c <= '9':
			kind = 2
			digits++
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			kind = 1
			letters++
		}
		if kind != 0 && prev != 0 && kind != prev {
			turns++
		}
		prev = kind
	}
	return letters < 2 || digits < 2 || turns < 2
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	e := 0.0
	for _, c := range counts {
		if c == 0 {
			continue
		}
		p := float64(c) / float64(len(s))
		e -= p * math.Log2(p)
	}
	return e
}

// notIPv6 vetoes colon runs that are not addresses: times, C++ scopes.
func notIPv6(s string) bool {
	if strings.Count(s, ":") < 2 {
		return true
	}
	hasHexLetter := strings.ContainsAny(strings.ToLower(s), "abcdef")
	return !strings.Contains(s, "::") && !hasHexLetter || s == "::"
}

// fileExtensions are last labels that make a dotted word a file name,
// not a host name.
var fileExtensions = map[string]bool{
	"json": true, "txt": true, "md": true, "go": true, "py": true, "js": true, "ts": true, "tsx": true,
	"jsx": true, "html": true, "htm": true, "css": true, "yaml": true, "yml": true, "toml": true,
	"log": true, "csv": true, "png": true, "jpg": true, "jpeg": true, "gif": true, "svg": true,
	"pdf": true, "sh": true, "db": true, "sql": true, "xml": true, "rs": true, "java": true,
	"rb": true, "lock": true, "mod": true, "sum": true, "ini": true, "cfg": true, "conf": true,
	"zip": true, "gz": true, "tar": true, "exe": true, "dll": true, "so": true, "ipynb": true,
	"docx": true, "xlsx": true, "pptx": true, "kt": true, "swift": true, "cpp": true, "hpp": true,
	"cs": true, "php": true, "vue": true, "wasm": true, "bin": true, "dat": true, "bak": true,
	"tmp": true, "env": true, "pem": true, "key": true, "crt": true,
}

// notHost vetoes dotted words that are not host names to hide: the API's
// own host, Bedrock model ids (us.anthropic.claude-...), file names.
func notHost(s string) bool {
	l := strings.ToLower(s)
	if strings.Contains(l, "anthropic.claude") || l == apiHost || l == "anthropic.com" || strings.HasSuffix(l, ".anthropic.com") || l == "claude.ai" || l == "claude.com" || strings.HasSuffix(l, ".claude.com") {
		return true
	}
	last := l[strings.LastIndexByte(l, '.')+1:]
	return fileExtensions[last]
}

// scrubber replaces private values in text by pseudonyms, the same value
// by the same pseudonym throughout one report.
type scrubber struct {
	pats  []pattern
	names map[string]map[string]int // class -> value -> number
	count map[string]int
	// literals are values known to be private (see Known), longest first;
	// words are those replaced only as whole words.
	literals []literal
	// byLen indexes the literals by length (their values; lens longest
	// first): a session's identifiers grow with its turns, and looking
	// for each in every text grew with their number.
	byLen  map[int]map[string]bool
	lens   []int
	words  *regexp.Regexp
	wordOf map[string]literal
	// servers maps MCP server names to their pseudonyms (strict policy
	// only; nil otherwise).
	servers  map[string]string
	serverRe *regexp.Regexp
	// memo is what text made of each text it scrubbed (a long session's
	// report holds the same system prompt, tool descriptions and texts
	// turn after turn: each distinct one is scrubbed once), up to
	// memoBytes of texts; a server added since changes what text makes,
	// and empties it.
	memo map[string]string
	// freeMemo is what the applier's freeText made of each text, emptied
	// with memo (its texts go through text).
	freeMemo  map[string]string
	memoBytes int
}

// maxMemoBytes bounds the texts the scrubber remembers.
const maxMemoBytes = 64 << 20

func newScrubber(k *Known) *scrubber {
	s := &scrubber{pats: patterns(), names: map[string]map[string]int{}, count: map[string]int{}, wordOf: map[string]literal{}}
	if k == nil {
		return s
	}
	var words []string
	for _, l := range k.literals {
		if l.word {
			words = append(words, regexp.QuoteMeta(l.value))
			s.wordOf[l.value] = l
			continue
		}
		s.literals = append(s.literals, l)
	}
	sort.SliceStable(s.literals, func(i, j int) bool { return len(s.literals[i].value) > len(s.literals[j].value) })
	s.byLen = map[int]map[string]bool{}
	for _, l := range s.literals {
		n := len(l.value)
		if s.byLen[n] == nil {
			s.byLen[n] = map[string]bool{}
			s.lens = append(s.lens, n)
		}
		s.byLen[n][l.value] = true
	}
	if len(words) > 0 {
		sort.Slice(words, func(i, j int) bool { return len(words[i]) > len(words[j]) })
		s.words = regexp.MustCompile(`\b(?:` + strings.Join(words, "|") + `)\b`)
	}
	return s
}

// pseudonym returns the stable stand-in of value in class: "[class-N]".
func (s *scrubber) pseudonym(class, value string) string {
	return fmt.Sprintf("[%s-%d]", class, s.number(class, value))
}

// number returns the stable number of value in class, counting the
// distinct values of the class from 1 in order of first use.
func (s *scrubber) number(class, value string) int {
	m := s.names[class]
	if m == nil {
		m = map[string]int{}
		s.names[class] = m
	}
	if n, ok := m[value]; ok {
		return n
	}
	s.count[class]++
	m[value] = s.count[class]
	return s.count[class]
}

// text scrubs free text: known private values first, then every pattern,
// then (strict) MCP server names.
func (s *scrubber) text(t string) string {
	if t == "" {
		return t
	}
	if r, ok := s.memo[t]; ok {
		return r
	}
	r := s.scrub(t)
	if s.memoBytes+len(t)+len(r) <= maxMemoBytes {
		if s.memo == nil {
			s.memo = map[string]string{}
		}
		s.memo[t] = r
		s.memoBytes += len(t) + len(r)
	}
	return r
}

// scrub is text without the memo.
func (s *scrubber) scrub(t string) string {
	for _, l := range s.literalsIn(t) {
		if strings.Contains(t, l.value) {
			t = strings.ReplaceAll(t, l.value, s.pseudonym(l.class, l.value))
		}
	}
	if s.words != nil {
		t = s.words.ReplaceAllStringFunc(t, func(w string) string {
			return s.pseudonym(s.wordOf[w].class, w)
		})
	}
	for _, p := range s.pats {
		t = s.apply(p, t)
	}
	return s.serverText(t)
}

// apply replaces the matches of one pattern.
func (s *scrubber) apply(p pattern, t string) string {
	idx := p.re.FindAllStringSubmatchIndex(t, -1)
	if idx == nil {
		return t
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		lo, hi := m[2*p.group], m[2*p.group+1]
		if lo < 0 {
			continue
		}
		v := t[lo:hi]
		if strings.HasPrefix(v, "[") || p.keep != nil && p.keep(v) {
			continue
		}
		b.WriteString(t[last:lo])
		b.WriteString(s.pseudonym(p.class, v))
		last = hi
	}
	b.WriteString(t[last:])
	return b.String()
}

// hasSecret reports whether t holds anything the patterns or the known
// values would replace.
func (s *scrubber) hasSecret(t string) bool {
	if len(s.literalsIn(t)) > 0 {
		return true
	}
	if s.words != nil && s.words.MatchString(t) {
		return true
	}
	for _, p := range s.pats {
		for _, m := range p.re.FindAllStringSubmatchIndex(t, -1) {
			lo, hi := m[2*p.group], m[2*p.group+1]
			if lo >= 0 && (p.keep == nil || !p.keep(t[lo:hi])) {
				return true
			}
		}
	}
	return false
}

// fewLiterals is how many literals are looked for one by one; past it,
// a text is read once per length of literal (byLen).
const fewLiterals = 16

// literalsIn returns the literals t holds, longest first (in the order of
// s.literals).
func (s *scrubber) literalsIn(t string) []literal {
	if len(s.literals) <= fewLiterals {
		var in []literal
		for _, l := range s.literals {
			if strings.Contains(t, l.value) {
				in = append(in, l)
			}
		}
		return in
	}
	var found map[string]bool
	for _, n := range s.lens {
		set := s.byLen[n]
		for i := 0; i+n <= len(t); i++ {
			if set[t[i:i+n]] {
				if found == nil {
					found = map[string]bool{}
				}
				found[t[i:i+n]] = true
			}
		}
	}
	if found == nil {
		return nil
	}
	var in []literal
	for _, l := range s.literals {
		if found[l.value] {
			in = append(in, l)
		}
	}
	return in
}

// addServer registers an MCP server name for the strict policy.
func (s *scrubber) addServer(name string) string {
	if p, ok := s.servers[name]; ok {
		return p
	}
	p := fmt.Sprintf("s%d", len(s.servers)+1)
	s.servers[name] = p
	s.serverRe = nil
	s.memo, s.memoBytes, s.freeMemo = nil, 0, nil // texts scrubbed before did not know it
	return p
}

// serverText replaces MCP server names in free text (strict policy): in
// mcp__SERVER__tool names and as whole words.
func (s *scrubber) serverText(t string) string {
	if len(s.servers) == 0 {
		return t
	}
	if s.serverRe == nil {
		names := make([]string, 0, len(s.servers))
		for n := range s.servers {
			names = append(names, regexp.QuoteMeta(n))
		}
		sort.Slice(names, func(i, j int) bool {
			if len(names[i]) != len(names[j]) {
				return len(names[i]) > len(names[j])
			}
			return names[i] < names[j]
		})
		alt := strings.Join(names, "|")
		s.serverRe = regexp.MustCompile(`mcp__(` + alt + `)__|\b(` + alt + `)\b`)
	}
	return s.serverRe.ReplaceAllStringFunc(t, func(m string) string {
		if strings.HasPrefix(m, "mcp__") && strings.HasSuffix(m, "__") && len(m) > 7 {
			if p, ok := s.servers[m[5:len(m)-2]]; ok {
				return "mcp__" + p + "__"
			}
		}
		if p, ok := s.servers[m]; ok {
			return p
		}
		return m
	})
}
