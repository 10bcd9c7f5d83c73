// Package filter parses and evaluates turn filter expressions, in the
// spirit of mitmproxy's filters and Wireshark's display filters:
//
//	flag:cache_break                 a flag of that kind (globs: flag:*_tool)
//	model:opus                       the model contains "opus" (or matches a glob)
//	tool:mcp__github__*              the response calls a tool matching the glob
//	thread:sub1                      the turn's thread (a glob)
//	cost>0.05                        the turn's price in US dollars (> >= < <= =)
//	tokens>100000                    the prompt's size in tokens
//	body:hello                       the request's or the response's content holds "hello"
//	req:hello  resp:hello            the request's content only, the response's only
//	body:/hel+o/                     a regular expression (Go syntax; quote it, body:"/a (b)/", when it holds blanks or parentheses)
//	~b hello  ~bq hello  ~bs hello   the same as body:, req:, resp: (mitmproxy's names)
//	a and b, a or b, not a, (a)      combined; terms side by side mean "and"
//	"two words"                      quotes make one term of text with blanks
//
// A bare word matches the turn's row text (model, thread, flags, tools,
// searches) or its content, as body: does. Matching is case-insensitive,
// regular expressions too. A turn's request content is what it added to
// its thread, not the history it repeats: its new messages (the prompt,
// tool results, reminders), not the system prompt or the tool
// definitions; its response content is the text, thinking and tool calls
// with their inputs.
//
// Evaluation works on [Fields], which callers fill from their own turn
// types, so the package depends on nothing else of tsinspect. [Options]
// carry the names an expression is checked against (the flag kinds), so
// that the command line and the UI refuse the same expressions with the
// same words.
package filter

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// Fields is what an expression can test about a turn.
type Fields struct {
	Flags  []string // flag kinds
	Model  string
	Tools  []string // tools the response calls
	Thread string
	// Cost is the turn's price in US dollars; Priced is false when it has
	// none (a cost test is then false).
	Cost   float64
	Priced bool
	// Tokens is the prompt's size: input, cache reads and writes.
	Tokens int64
	// Text is the turn's row text a bare word is looked for in (lower
	// case).
	Text string
	// Request and Response return the turn's content in lower case, for
	// body terms and bare words (see the package documentation); nil when
	// the caller has none. They are called only when an expression needs
	// them.
	Request, Response func() string
}

// Expr is a parsed expression.
type Expr interface {
	// Match reports whether f satisfies the expression.
	Match(f *Fields) bool
	String() string
}

// HasFields reports whether e tests a field (not only bare words).
func HasFields(e Expr) bool {
	switch e := e.(type) {
	case *and:
		return HasFields(e.a) || HasFields(e.b)
	case *or:
		return HasFields(e.a) || HasFields(e.b)
	case *not:
		return HasFields(e.e)
	case *term:
		return e.key != ""
	}
	return false
}

type and struct{ a, b Expr }
type or struct{ a, b Expr }
type not struct{ e Expr }
type term struct {
	key, op, val string
	num          float64
	// lower is val in lower case; re, for a /regex/ value, its compiled
	// form (case-insensitive).
	lower string
	re    *regexp.Regexp
}

func (e *and) Match(f *Fields) bool { return e.a.Match(f) && e.b.Match(f) }
func (e *or) Match(f *Fields) bool  { return e.a.Match(f) || e.b.Match(f) }
func (e *not) Match(f *Fields) bool { return !e.e.Match(f) }
func (e *and) String() string       { return "(" + e.a.String() + " and " + e.b.String() + ")" }
func (e *or) String() string        { return "(" + e.a.String() + " or " + e.b.String() + ")" }
func (e *not) String() string       { return "not " + e.e.String() }
func (e *term) String() string {
	v := e.val
	if strings.ContainsAny(v, " \t()") {
		v = strconv.Quote(v)
	}
	if e.key == "" {
		return v
	}
	return e.key + e.op + v
}

// glob matches s against a glob, case-insensitively; a pattern without
// glob characters matches when s contains it (model:opus) or, for exact
// fields, equals it.
func glob(pattern, s string, contains bool) bool {
	pattern, s = strings.ToLower(pattern), strings.ToLower(s)
	if !strings.ContainsAny(pattern, "*?[") {
		if contains {
			return strings.Contains(s, pattern)
		}
		return s == pattern
	}
	ok, err := path.Match(pattern, s)
	return err == nil && ok
}

// in reports whether the text holds the term's value (a substring, or a
// match of its regular expression). text is lower case.
func (e *term) in(text string) bool {
	if e.re != nil {
		return e.re.MatchString(text)
	}
	return strings.Contains(text, e.lower)
}

func content(get func() string) string {
	if get == nil {
		return ""
	}
	return get()
}

func (e *term) Match(f *Fields) bool {
	switch e.key {
	case "":
		return e.in(f.Text) || e.in(content(f.Request)) || e.in(content(f.Response))
	case "body":
		return e.in(content(f.Request)) || e.in(content(f.Response))
	case "req":
		return e.in(content(f.Request))
	case "resp":
		return e.in(content(f.Response))
	case "flag":
		for _, k := range f.Flags {
			if glob(e.val, k, false) {
				return true
			}
		}
		return false
	case "model":
		return glob(e.val, f.Model, true)
	case "tool":
		for _, t := range f.Tools {
			if glob(e.val, t, false) {
				return true
			}
		}
		return false
	case "thread":
		return glob(e.val, f.Thread, false)
	case "cost":
		return f.Priced && compare(f.Cost, e.op, e.num)
	case "tokens":
		return compare(float64(f.Tokens), e.op, e.num)
	}
	return false
}

func compare(v float64, op string, n float64) bool {
	switch op {
	case ">":
		return v > n
	case ">=":
		return v >= n
	case "<":
		return v < n
	case "<=":
		return v <= n
	case "=", ":":
		return v == n
	}
	return false
}

// Options are what an expression's names are checked against.
type Options struct {
	// FlagKinds, when set, are the flag kinds there are: flag: must name
	// one, or be a glob matching one.
	FlagKinds []string
}

// Parse parses an expression with no names to check against; the error
// says where it went wrong.
func Parse(s string) (Expr, error) { return Options{}.Parse(s) }

// Parse parses an expression and checks its names; the error says where
// it went wrong, in the same words wherever it is shown.
func (o Options) Parse(s string) (Expr, error) {
	toks, err := tokenize(s)
	if err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	p := &parser{toks: toks, opts: o}
	if len(p.toks) == 0 {
		return nil, fmt.Errorf("filter: empty expression")
	}
	e, err := p.or()
	if err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	if p.i < len(p.toks) {
		return nil, fmt.Errorf("filter: unexpected %q", p.toks[p.i].s)
	}
	return e, nil
}

// token is a word of an expression; quoted is set for a "quoted" one,
// which is always text (a field's quoted value, body:"two words", is not).
type token struct {
	s      string
	quoted bool
}

// tokenize splits on blanks and parentheses; a double-quoted string is
// one token (\" and \\ escape inside it), also after a field name
// (body:"two words").
func tokenize(s string) ([]token, error) {
	var out []token
	var cur strings.Builder
	quoted, started := false, false
	flush := func() {
		if started {
			out = append(out, token{cur.String(), quoted})
		}
		cur.Reset()
		quoted, started = false, false
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '"':
			// Text when the quote opens the token; else a field's value.
			quoted = quoted || !started
			started = true
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) {
					j++
				}
				cur.WriteRune(rs[j])
			}
			if j >= len(rs) {
				return nil, fmt.Errorf("a quote is not closed")
			}
			i = j
		case r == '(' || r == ')':
			flush()
			out = append(out, token{s: string(r)})
		case r == ' ' || r == '\t' || r == '\n':
			flush()
		default:
			started = true
			cur.WriteRune(r)
		}
	}
	flush()
	return out, nil
}

type parser struct {
	toks []token
	i    int
	opts Options
}

func (p *parser) peek() string {
	if p.i < len(p.toks) && !p.toks[p.i].quoted {
		return p.toks[p.i].s
	}
	if p.i < len(p.toks) {
		return "\x00text"
	}
	return ""
}

func (p *parser) or() (Expr, error) {
	e, err := p.and()
	if err != nil {
		return nil, err
	}
	for strings.EqualFold(p.peek(), "or") || p.peek() == "|" {
		p.i++
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		e = &or{e, r}
	}
	return e, nil
}

func (p *parser) and() (Expr, error) {
	e, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t == "" || t == ")" || strings.EqualFold(t, "or") || t == "|" {
			return e, nil
		}
		if strings.EqualFold(t, "and") || t == "&" {
			p.i++
		}
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		e = &and{e, r}
	}
}

// aliases are mitmproxy's body filters, each taking the next token.
var aliases = map[string]string{"~b": "body", "~bq": "req", "~bs": "resp"}

func (p *parser) unary() (Expr, error) {
	t := p.peek()
	switch {
	case t == "":
		return nil, fmt.Errorf("expression ends too soon")
	case t == "\x00text":
		tok := p.toks[p.i]
		p.i++
		return textTerm("", tok.s)
	case strings.EqualFold(t, "not") || t == "!":
		p.i++
		e, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &not{e}, nil
	case t == "(":
		p.i++
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.peek() != ")" {
			return nil, fmt.Errorf("missing )")
		}
		p.i++
		return e, nil
	case t == ")" || strings.EqualFold(t, "and") || strings.EqualFold(t, "or"):
		return nil, fmt.Errorf("unexpected %q", t)
	case aliases[strings.ToLower(t)] != "":
		p.i++
		if p.i >= len(p.toks) {
			return nil, fmt.Errorf("%s wants the text to look for after it", t)
		}
		tok := p.toks[p.i]
		p.i++
		return textTerm(aliases[strings.ToLower(t)], tok.s)
	}
	p.i++
	return p.opts.parseTerm(p.toks[p.i-1])
}

// fieldKeys are the fields a term may name; synonyms maps the other names
// a field goes by.
func fieldKeys() []string {
	return []string{"flag", "model", "tool", "thread", "cost", "tokens", "body", "req", "resp"}
}

var synonyms = map[string]string{"request": "req", "response": "resp"}

// textTerm makes a term looking for text (bare, or in a body field): a
// value between slashes is a regular expression.
func textTerm(key, val string) (Expr, error) {
	tm := &term{key: key, op: ":", val: val, lower: strings.ToLower(val)}
	if len(val) >= 2 && strings.HasPrefix(val, "/") && strings.HasSuffix(val, "/") {
		re, err := regexp.Compile("(?i)" + val[1:len(val)-1])
		if err != nil {
			return nil, fmt.Errorf("%q: not a regular expression: %v", val, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
		tm.re = re
	}
	if key == "" {
		tm.op = ""
	}
	return tm, nil
}

func (o Options) parseTerm(tok token) (Expr, error) {
	t := tok.s
	if tok.quoted {
		return textTerm("", t)
	}
	keys := fieldKeys()
	names := append(append([]string(nil), keys...), "request", "response")
	for _, name := range names {
		rest, ok := strings.CutPrefix(strings.ToLower(t), name)
		if !ok || rest == "" {
			continue
		}
		k := name
		if s, ok := synonyms[name]; ok {
			k = s
		}
		rest = t[len(name):]
		op := ""
		for _, o := range []string{">=", "<=", ">", "<", "=", ":"} {
			if strings.HasPrefix(rest, o) {
				op = o
				break
			}
		}
		if op == "" {
			continue
		}
		val := rest[len(op):]
		if val == "" {
			return nil, fmt.Errorf("%q: nothing after %s", t, op)
		}
		switch k {
		case "cost", "tokens":
			n, err := strconv.ParseFloat(strings.TrimPrefix(val, "$"), 64)
			if err != nil {
				return nil, fmt.Errorf("%q: %s wants a number", t, k)
			}
			return &term{key: k, op: op, val: val, num: n}, nil
		case "body", "req", "resp":
			if op != ":" && op != "=" {
				return nil, fmt.Errorf("%q: %s takes : (e.g. %s:hello)", t, name, name)
			}
			return textTerm(k, val)
		}
		if op != ":" && op != "=" {
			return nil, fmt.Errorf("%q: %s takes : (e.g. %s:x)", t, k, k)
		}
		if k == "flag" && len(o.FlagKinds) > 0 {
			found := false
			for _, kind := range o.FlagKinds {
				found = found || glob(val, kind, false)
			}
			if !found {
				return nil, fmt.Errorf("%q: no flag kind is %s (kinds: %s)", t, val, strings.Join(o.FlagKinds, ", "))
			}
		}
		return &term{key: k, op: op, val: val}, nil
	}
	if i := strings.IndexAny(t, ":<>="); i > 0 && !strings.HasPrefix(t, "/") {
		return nil, fmt.Errorf("%q: unknown field %q (fields: %s; quote text that holds a colon)", t, t[:i], strings.Join(keys, ", "))
	}
	return textTerm("", t)
}
