package web_test

import (
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

func TestZZUser(t *testing.T) {
	url := os.Getenv("ZZ_URL")
	if url == "" {
		t.Skip()
	}
	b := newBrowser(t)
	for _, p := range strings.Split(os.Getenv("ZZ_PAGES"), " ") {
		name, path, _ := strings.Cut(p, "=")
		keys, path2, _ := strings.Cut(path, "!")
		if path2 == "" {
			path2, keys = keys, ""
		}
		b.run("open "+path2, chromedp.Navigate(url+path2))
		b.waitFor("ready", "document.querySelector('[data-page]') && (document.querySelector('[data-page]').dataset.ready || document.querySelector('[data-page]').dataset.page === 'compare')")
		for _, k := range keys {
			b.run("key", chromedp.KeyEvent(string(k)))
			b.waitFor("tab", "!document.querySelector('#tab') || document.querySelector('#tab').dataset.shown")
		}
		eval[bool](b, "new Promise(r => setTimeout(() => r(true), 400))")
		b.shot(name)
		t.Logf("%s:\n%s", name, eval[string](b, "document.body.innerText.slice(0, 3000)"))
	}
	b.clean()
}
