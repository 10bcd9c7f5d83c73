package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/compare"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// TestTabsFollowTheTable: the tab bar lists the tab table's tabs, in its
// order, each with its key (the Compare tab only beside another
// session), and each key opens its tab, with the tab's view drawn.
func TestTabsFollowTheTable(t *testing.T) {
	s := goldenSession()
	other := timeline.Build(goldenExchanges()[:6])
	cmp := view.NewComparison(compare.Compare(compare.Side{Session: s}, compare.Side{Session: other}, compare.Options{}), "other.db")
	for _, compared := range []bool{false, true} {
		t.Run(fmt.Sprint("compared=", compared), func(t *testing.T) {
			h := newHarness(t, s, 140, 40, Options{Title: "golden.db"}, func(m *view.Model) {
				if compared {
					m.SetComparison(cmp)
				}
			})
			rows := view.TabsShown(compared)
			var want []string
			for _, r := range rows {
				want = append(want, fmt.Sprintf("%c %s", r.Key, r.Title))
			}
			bar := lineWith(h.text(), want[0])
			var got []string
			for _, label := range strings.Split(bar, "│") {
				got = append(got, strings.TrimSpace(label))
			}
			if strings.Join(got, " | ") != strings.Join(want, " | ") {
				t.Errorf("the tab bar lists\n  %s\nthe tab table\n  %s", strings.Join(got, " | "), strings.Join(want, " | "))
			}
			for _, r := range rows {
				h.keys(string(r.Key))
				if h.a.m.Tab() != r.Tab {
					t.Errorf("key %c opened %s, want %s", r.Key, h.a.m.Tab(), r.Title)
					continue
				}
				if r.Form == view.FormTree {
					continue // the Raw pane, TestGoldenTabs draws it
				}
				// The view draws its heading first: the open tab's
				// text is the table's view of the tab.
				first := view.Text(r.Tab.Lines(view.TabInput{Session: s, Turn: h.a.m.Selected(), Width: 138, Height: 8,
					Explain: timeline.Explain, Comparison: h.a.m.Comparison()}))
				head := strings.TrimSpace(strings.SplitN(first, "\n", 2)[0])
				if head == "" || !strings.Contains(h.text(), head) {
					t.Errorf("key %c: the screen does not show the %s view's heading %q:\n%s", r.Key, r.Title, head, h.text())
				}
			}
			if !compared {
				h.keys("1")
				h.keys(string(view.TabCompare.Row().Key))
				if h.a.m.Tab() != view.TabWorkingSet {
					t.Errorf("the Compare key opened %s with no comparison", h.a.m.Tab())
				}
			}
		})
	}
}
