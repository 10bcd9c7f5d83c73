package web

import (
	"html"
	"html/template"
	"strings"

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

// writeLine writes one line of the view's text as HTML: a span per run of
// text with a role, the text escaped.
func writeLine(b *strings.Builder, l view.Line) {
	for _, sp := range l {
		class := ""
		if int(sp.Role) < len(roleClass) {
			class = roleClass[sp.Role]
		}
		if class == "" {
			b.WriteString(html.EscapeString(sp.Text))
			continue
		}
		b.WriteString(`<span class="`)
		b.WriteString(class)
		b.WriteString(`">`)
		b.WriteString(html.EscapeString(sp.Text))
		b.WriteString(`</span>`)
	}
}

// lineHTML is one line as HTML.
func lineHTML(l view.Line) string {
	var b strings.Builder
	writeLine(&b, l)
	return b.String()
}

// linesHTML is the view's text as preformatted HTML, a line a line.
func linesHTML(ls []view.Line) template.HTML {
	var b strings.Builder
	b.WriteString(`<pre class="lines">`)
	for i, l := range ls {
		if i > 0 {
			b.WriteByte('\n')
		}
		writeLine(&b, l)
	}
	b.WriteString(`</pre>`)
	return template.HTML(b.String())
}
