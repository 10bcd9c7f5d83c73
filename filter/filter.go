// Package filter parses and evaluates turn filter expressions, in the
// spirit of mitmproxy's filters and Wireshark's display filters:
//
//	flag:cache_break                 a flag of that kind (globs: flag:*_tool)
//	model:opus                       the model contains "opus" (or matches a glob)
//	tool:mcp__github__*              the response calls a tool matching the glob
//	thread:sub1                      the turn's thread (a glob)
//	cost>0.05                        the turn's price in US dollars (> >= < <= =)
//	tokens>100000                    the prompt's size in tokens
//	a and b, a or b, not a, (a)      combined; terms side by side mean "and"
//
// A bare word matches the turn's text (as the UI's plain search does).
// Evaluation works on [Fields], which callers fill from their own turn
// types, so the package depends on nothing else of tsinspect.
package filter

import (
	"fmt"
	"path"
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
	// Text is what a bare word is looked for in (lower case).
	Text string
}

// Expr is a parsed expression.
type Expr interface {
	// Match reports whether f satisfies the expression.
	Match(f *Fields) bool
	String() string
}

// HasFields reports whether e tests a field (not only bare words): the UI
// treats a query of bare words as its plain text search.
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
}

func (e *and) Match(f *Fields) bool { return e.a.Match(f) && e.b.Match(f) }
func (e *or) Match(f *Fields) bool  { return e.a.Match(f) || e.b.Match(f) }
func (e *not) Match(f *Fields) bool { return !e.e.Match(f) }
func (e *and) String() string       { return "(" + e.a.String() + " and " + e.b.String() + ")" }
func (e *or) String() string        { return "(" + e.a.String() + " or " + e.b.String() + ")" }
func (e *not) String() string       { return "not " + e.e.String() }
func (e *term) String() string {
	if e.key == "" {
		return e.val
	}
	return e.key + e.op + e.val
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

func (e *term) Match(f *Fields) bool {
	switch e.key {
	case "":
		return strings.Contains(f.Text, strings.ToLower(e.val))
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

// Parse parses an expression; the error says where it went wrong.
func Parse(s string) (Expr, error) {
	p := &parser{toks: tokenize(s)}
	if len(p.toks) == 0 {
		return nil, fmt.Errorf("filter: empty expression")
	}
	e, err := p.or()
	if err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	if p.i < len(p.toks) {
		return nil, fmt.Errorf("filter: unexpected %q", p.toks[p.i])
	}
	return e, nil
}

// tokenize splits on blanks and parentheses.
func tokenize(s string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for _, r := range s {
		switch {
		case r == '(' || r == ')':
			flush()
			out = append(out, string(r))
		case r == ' ' || r == '\t' || r == '\n':
			flush()
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return out
}

type parser struct {
	toks []string
	i    int
}

func (p *parser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
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

func (p *parser) unary() (Expr, error) {
	t := p.peek()
	switch {
	case t == "":
		return nil, fmt.Errorf("expression ends too soon")
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
	}
	p.i++
	return parseTerm(t)
}

// fieldKeys are the fields a term may name.
func fieldKeys() []string { return []string{"flag", "model", "tool", "thread", "cost", "tokens"} }

func parseTerm(t string) (Expr, error) {
	keys := fieldKeys()
	for _, k := range keys {
		rest, ok := strings.CutPrefix(strings.ToLower(t), k)
		if !ok || rest == "" {
			continue
		}
		rest = t[len(k):]
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
		tm := &term{key: k, op: op, val: val}
		switch k {
		case "cost", "tokens":
			n, err := strconv.ParseFloat(strings.TrimPrefix(val, "$"), 64)
			if err != nil {
				return nil, fmt.Errorf("%q: %s wants a number", t, k)
			}
			tm.num = n
		default:
			if op != ":" && op != "=" {
				return nil, fmt.Errorf("%q: %s takes : (e.g. %s:x)", t, k, k)
			}
		}
		return tm, nil
	}
	if i := strings.IndexAny(t, ":<>="); i > 0 {
		return nil, fmt.Errorf("%q: unknown field %q (fields: %s)", t, t[:i], strings.Join(keys, ", "))
	}
	return &term{val: t}, nil
}
