package web

import (
	"fmt"
	"html/template"
	"io"
	"net/url"
	"regexp"
	"strconv"

	"github.com/tsinspect/tsinspect/timeline/view"
)

// roleClass is the CSS class of each role of the view's text (style.css
// gives them their colours, as the terminal's theme does).
var roleClass = [...]string{
	view.RoleText:     "",
	view.RoleDim:      "dim",
	view.RoleTitle:    "title",
	view.RoleKey:      "key",
	view.RoleString:   "str",
	view.RoleAdded:    "added",
	view.RoleRemoved:  "removed",
	view.RoleError:    "error",
	view.RoleWarning:  "warning",
	view.RoleInfo:     "info",
	view.RoleRead:     "read",
	view.RoleCreated:  "created",
	view.RoleInput:    "input",
	view.RoleAlways:   "always",
	view.RoleSearch:   "search",
	view.RoleRestored: "restored",
	view.RoleMatch:    "match",
}

// span is a run of the view's text with its role's class ("" for plain
// text), as the "line" fragment writes it; Href, when set, makes it a
// link (a turn the text names: linkTurns).
type span struct{ Class, Text, Href string }

// turnRef is how the view names a turn of the session: "#37".
var turnRef = regexp.MustCompile(`#[0-9]+\b`)

// linkTurns makes each "#N" of ls that names a turn of the session at key
// (of turns turns) a link to it: a copy, ls is not changed.
func linkTurns(ls [][]span, key string, turns int) [][]span {
	out := make([][]span, len(ls))
	for i, l := range ls {
		for _, sp := range l {
			at := 0
			for _, m := range turnRef.FindAllStringIndex(sp.Text, -1) {
				n, err := strconv.Atoi(sp.Text[m[0]+1 : m[1]])
				if err != nil || n < 1 || n > turns {
					continue
				}
				if m[0] > at {
					out[i] = append(out[i], span{Class: sp.Class, Text: sp.Text[at:m[0]]})
				}
				out[i] = append(out[i], span{Class: sp.Class, Text: sp.Text[m[0]:m[1]], Href: "/s/" + url.PathEscape(key) + "/turn/" + strconv.Itoa(n)})
				at = m[1]
			}
			if at < len(sp.Text) || at == 0 {
				out[i] = append(out[i], span{Class: sp.Class, Text: sp.Text[at:]})
			}
		}
	}
	return out
}

// spans is a line of the view's text for the "line" fragment.
func spans(l view.Line) []span {
	out := make([]span, len(l))
	for i, sp := range l {
		out[i].Text = sp.Text
		if int(sp.Role) < len(roleClass) {
			out[i].Class = roleClass[sp.Role]
		}
	}
	return out
}

// linesOf is the view's text for the "lines" fragment.
func linesOf(ls []view.Line) [][]span {
	out := make([][]span, len(ls))
	for i, l := range ls {
		out[i] = spans(l)
	}
	return out
}

// fragments are the templates of templates/fragments.html, which every
// page has too.
type fragments struct{ t *template.Template }

// write writes fragment name of data.
func (f fragments) write(w io.Writer, name string, data any) error {
	if err := f.t.ExecuteTemplate(w, name, data); err != nil {
		return fmt.Errorf("web: fragment %s: %w", name, err)
	}
	return nil
}

// runs is a line of the view's text as its runs, each [class, text],
// for the script to set as text (the turn list's cells).
func runs(l view.Line) [][2]string {
	out := make([][2]string, len(l))
	for i, sp := range spans(l) {
		out[i] = [2]string{sp.Class, sp.Text}
	}
	return out
}
