// Command teamstore measures a team's store on PostgreSQL: how fast
// 'tsinspect push' sends real sessions with several people pushing at
// once (each reading every session whole), then, for a simulated team of -people people of -sessions
// sessions each (the public real sessions' shapes under new IDs, people,
// projects and times, written straight into the store), how long the
// team's listing and the team's advice take from the store, at each of
// -steps team sizes. It prints one Markdown table.
//
//	go run ./bench/teamstore -url postgres://USER@HOST/DB [-people 100] [-sessions 1000] [-steps 10,50,100] [-pushers 8]
//
// The database must be empty (the command fills it): make one of its own
// (createdb tsinspect_bench). Each reading runs three times and the best
// is kept; figures vary by ±15 % on a shared machine.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/catalog"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/team"
)

func main() {
	url := flag.String("url", os.Getenv("TSINSPECT_BENCH_PG"), "the store's `URL` (an empty database of its own)")
	people := flag.Int("people", 100, "people in the simulated team")
	sessions := flag.Int("sessions", 1000, "sessions per person")
	steps := flag.String("steps", "10,50,100", "team sizes (people) to measure at, ascending")
	pushers := flag.Int("pushers", 8, "people pushing the public sessions at once")
	public := flag.String("public", "source/testdata/public", "the real sessions whose shapes the team's are")
	flag.Parse()
	if err := run(*url, *public, *people, *sessions, *pushers, *steps); err != nil {
		fmt.Fprintln(os.Stderr, "teamstore:", err)
		os.Exit(1)
	}
}

func run(url, public string, people, sessions, pushers int, stepList string) error {
	if url == "" {
		return fmt.Errorf("-url: name an empty database of its own")
	}
	ctx := context.Background()
	tab := pricing.Default()
	// Push throughput: the public sessions, as several people at once
	// (the listing's index warmed by a push before): each session read
	// whole for its requests, searches and advice facts, and sent.
	if _, err := team.Push(ctx, team.PushOptions{URL: url, Person: "warm-up", Machine: "bench", Roots: []string{public}, Prices: tab}); err != nil {
		return err
	}
	started := time.Now()
	var wg sync.WaitGroup
	stats := make([]team.PushStats, pushers)
	errs := make([]error, pushers)
	for i := range pushers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stats[i], errs[i] = team.Push(ctx, team.PushOptions{URL: url, Person: fmt.Sprintf("pusher-%02d", i), Machine: "bench", Roots: []string{public}, Prices: tab, Version: "bench"})
		}()
	}
	wg.Wait()
	took := time.Since(started)
	pushed, turns := 0, 0
	for i, err := range errs {
		if err != nil {
			return err
		}
		pushed += stats[i].Pushed
		turns += stats[i].Turns
	}
	fmt.Printf("push: %d people at once, %d sessions (%d turns) in %s: %.0f sessions/s, %.0f turns/s (each session read whole and sent)\n",
		pushers, pushed, turns, took.Round(time.Millisecond), float64(pushed)/took.Seconds(), float64(turns)/took.Seconds())
	started = time.Now()
	again, err := team.Push(ctx, team.PushOptions{URL: url, Person: "pusher-00", Machine: "bench", Roots: []string{public}, Prices: tab})
	if err != nil {
		return err
	}
	fmt.Printf("push again, nothing changed: %d sessions checked in %s\n\n", again.Unchanged, time.Since(started).Round(time.Millisecond))

	fmt.Println("| people | sessions | simulate (COPY) | listing, all | listing, one person | listing, --since 30d | advise, --since 30d | advise, all |")
	fmt.Println("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	done := 0
	newest := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, f := range strings.Split(stepList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= done || n > people {
			return fmt.Errorf("-steps %q: want ascending team sizes up to -people", stepList)
		}
		started := time.Now()
		if _, err := team.Simulate(ctx, team.SimOptions{URL: url, Roots: []string{public}, People: n - done, FirstPerson: done, Sessions: sessions,
			Days: 365, Projects: 40, Newest: newest, Prices: tab, Log: io.Discard}); err != nil {
			return err
		}
		sim := time.Since(started)
		done = n
		s, err := team.Open(ctx, url)
		if err != nil {
			return err
		}
		since := newest.AddDate(0, 0, -30)
		var total int
		all := best(func() error {
			l, err := s.Listing(ctx, team.Filter{}, catalog.Query{})
			total = l.Totals.Sessions
			return err
		})
		one := best(func() error {
			_, err := s.Listing(ctx, team.Filter{Person: "person-0001"}, catalog.Query{})
			return err
		})
		recent := best(func() error { _, err := s.Listing(ctx, team.Filter{Since: since}, catalog.Query{}); return err })
		adv := func(f team.Filter) func() error {
			return func() error {
				facts, err := s.Facts(ctx, f)
				if err == nil {
					advice.Advise(facts, advice.Options{Prices: tab.Describe()})
				}
				return err
			}
		}
		advRecent := best(adv(team.Filter{Since: since}))
		advAll := best(adv(team.Filter{}))
		s.Close()
		fmt.Printf("| %d | %d | %s | %s | %s | %s | %s | %s |\n", n, total, sim.Round(time.Millisecond), ms(all), ms(one), ms(recent), ms(advRecent), ms(advAll))
	}
	return nil
}

// best runs f three times and returns its shortest time (an error ends
// the command).
func best(f func() error) time.Duration {
	var b time.Duration
	for i := range 3 {
		started := time.Now()
		if err := f(); err != nil {
			fmt.Fprintln(os.Stderr, "teamstore:", err)
			os.Exit(1)
		}
		if d := time.Since(started); i == 0 || d < b {
			b = d
		}
	}
	return b
}

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }
