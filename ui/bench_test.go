package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/tsinspect/tsinspect/store"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/timeline/view"
)

// The budgets these benchmarks measure: first paint of a 1,000-turn
// session under 500 ms, a key press to its redraw under 50 ms.

// paint builds the interface over s on a 120x40 simulation screen and
// draws it once.
func paint(s *timeline.Session) *app {
	sim := tcell.NewSimulationScreen("UTF-8")
	a := newApp(view.New(s), Options{Screen: sim})
	sim.SetSize(120, 40)
	a.tv.ForceDraw()
	return a
}

// BenchmarkFirstPaint1000 is the interface's share of opening a
// 1,000-turn session: model, widgets and the first frame. It reports the
// heap the built session and interface hold (heap-MB).
func BenchmarkFirstPaint1000(b *testing.B) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := timeline.Build(bigExchanges(1000))
	a := paint(s)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(a)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		paint(s)
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1e6, "heap-MB")
}

// bigCapture writes a 1,000-turn capture file and returns its path and
// the size of its bodies.
func bigCapture(b *testing.B) (string, int) {
	path := filepath.Join(b.TempDir(), "big.db")
	db, err := store.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	exs := bigExchanges(1000)
	var bytes int
	for i := range exs {
		bytes += len(exs[i].ReqBody) + len(exs[i].RespBody)
		if err := db.Insert(context.Background(), &exs[i]); err != nil {
			b.Fatal(err)
		}
	}
	return path, bytes
}

// BenchmarkOpenFirstFrame1000 is what 'tsinspect open' does before its
// first frame on a 1,000-turn capture (ui.Open): check the file, build the
// interface, draw it saying it is loading. The turns follow when the
// session is built (BenchmarkOpen1000).
func BenchmarkOpenFirstFrame1000(b *testing.B) {
	path, _ := bigCapture(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		db, err := store.OpenReadOnly(path)
		if err != nil {
			b.Fatal(err)
		}
		m := view.New(nil)
		m.SetStatus("loading big.db …")
		sim := tcell.NewSimulationScreen("UTF-8")
		a := newApp(m, Options{Screen: sim})
		sim.SetSize(120, 40)
		a.tv.ForceDraw()
		db.Close()
	}
}

// BenchmarkOpen1000 is all of 'tsinspect open' on a 1,000-turn capture
// file before the first frame: read the file, decode and build the
// timeline, build the interface, draw.
func BenchmarkOpen1000(b *testing.B) {
	path, bytes := bigCapture(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		db, err := store.OpenReadOnly(path)
		if err != nil {
			b.Fatal(err)
		}
		exs, err := db.Exchanges(context.Background())
		db.Close()
		if err != nil {
			b.Fatal(err)
		}
		paint(timeline.Build(exs))
	}
	b.ReportMetric(float64(bytes)/1e6, "bodies-MB")
}

// BenchmarkKeyToRedraw measures one key press and the frame after it on
// a 1,000-turn session, for each tab open (moving to another turn
// re-renders the tab) and for the keys that refilter the list.
func BenchmarkKeyToRedraw(b *testing.B) {
	s := timeline.Build(bigExchanges(1000))
	for tab := view.Tab(0); tab < view.NumTabs; tab++ {
		b.Run("j_"+tab.String(), func(b *testing.B) {
			a := paint(s)
			h := &harness{a: a}
			h.keys(fmt.Sprint(int(tab) + 1))
			a.m.Select(500)
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				if i%2 == 0 {
					h.key(tcell.KeyRune, 'j')
				} else {
					h.key(tcell.KeyRune, 'k')
				}
				i++
			}
		})
	}
	for _, k := range []struct{ name, keys string }{{"t_thread", "t"}, {"f_flagged", "f"}, {"n_flag", "n"}, {"G_end", "G"}} {
		b.Run(k.name, func(b *testing.B) {
			a := paint(s)
			h := &harness{a: a}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				h.keys(k.keys)
			}
		})
	}
}

// BenchmarkFilter1000 filters a 1,000-turn session with the turn list's
// queries: a field (flag:), a word of the row text, and words and
// regular expressions in the content, first (content read and cached)
// and then again (as when typing refilters).
func BenchmarkFilter1000(b *testing.B) {
	s := timeline.Build(bigExchanges(1000))
	for _, q := range []string{"flag:cache_break", "echo", "body:file1", `body:/file[0-9]+\.go/`, "req:task"} {
		b.Run("cold/"+q, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				view.New(s).SetQuery(q)
			}
		})
		b.Run(q, func(b *testing.B) {
			m := view.New(s)
			m.SetQuery(q) // the content is read once
			if m.QueryError() != "" {
				b.Fatal(m.QueryError())
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				m.SetQuery("")
				m.SetQuery(q)
			}
			b.ReportMetric(float64(m.Len()), "turns-shown")
		})
	}
}
