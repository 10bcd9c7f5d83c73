package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/tsinspect/tsinspect/fixtures/democapture"
	"github.com/tsinspect/tsinspect/importer"
	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/source"
	"github.com/tsinspect/tsinspect/timeline"
	"github.com/tsinspect/tsinspect/ui"
)

func runOpen(env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "open", "FILE|SESSION [--follow | --compare OTHER] [--prices FILE]", `
Browse a capture, or a session Claude Code keeps on disk, in the
terminal. SESSION is a session ID or a prefix of one, latest, or the
path of its .jsonl file (see 'tsinspect sessions'): it is read in place,
nothing to set up. The terminal shows: the list of its Messages API turns
(time, thread, model, catalog and working-set sizes, prompt tokens with a
bar of cache read / created / uncached input, price in US dollars, stop
reason, flags) and, for the selected turn, what the model could call,
what it was told about, its tool searches, the prompt cache, its flags
explained (with what a cache break or a blind call cost), and the raw
exchange.
Works on a capture that is still being written: it shows what was there
when it opened, or, with --follow, new turns as they are recorded (in a
second terminal beside 'tsinspect record'; it waits for the file to
appear); a session Claude Code is still writing shows each new turn
within a quarter of a second of Claude Code writing it.
With --compare OTHER (a capture or a session, as for 'tsinspect diff'),
the turn list marks each turn that differs from its counterpart in OTHER
(≠) or has none (−), and tab `+ui.CompareTab()+` shows what differs.
`+"\n"+ui.KeysAbout())
	follow := fs.Bool("follow", false, "keep reading the capture as it grows: new turns appear within a second")
	other := fs.String("compare", "", "set the session beside `OTHER` (a capture or a session): differing turns marked, tab "+ui.CompareTab())
	prices := pricesFlag(fs)
	pos, err := cli.Args(fs, args, 1, 1, "one capture FILE or SESSION")
	if err != nil {
		return err
	}
	if *follow && *other != "" {
		return cli.Usage("open: --compare works on a session as it stands, not with --follow")
	}
	path, err := source.Resolve(pos[0], env.Stderr)
	if err != nil {
		return readError("open", pos[0], err)
	}
	var compared *timeline.Session
	if *other != "" {
		b, err := source.Load(*other, env.Stderr)
		if err != nil {
			return readError("open", *other, err)
		}
		compared = b.Session()
	}
	kind := source.KindOf(path)
	title := kind.Title(path)
	tab, err := loadPrices(env, *prices)
	if err != nil {
		return err
	}
	ctx, stop := uiContext()
	defer stop()
	if *follow {
		// It waits for a capture that is not there yet; a file of another
		// format never becomes one.
		if kind.Name == source.KindCapture {
			if what := importer.Importable(path); what != "" {
				return readError("open", pos[0], errors.New(what))
			}
		}
		return ui.RunLive(ctx, path, ui.Options{Title: "following " + title, Prices: tab, Poll: kind.Poll, SaveDir: sessionfiles.SaveDir(os.Getenv)})
	}
	if err := ui.Open(ctx, path, ui.Options{Title: title, Prices: tab, Compare: compared, CompareName: filepath.Base(*other), SaveDir: sessionfiles.SaveDir(os.Getenv)}); err != nil {
		return readError("open", pos[0], err)
	}
	return nil
}

func runReplay(env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "replay", "FILE [--speed N] [--prices FILE]", `
Play the turns of a capture back in the order and at the times they were
recorded, N times faster: each turn appears when its request was sent and
shows "streaming" until its response ended. Space pauses, then steps one
turn at a time; p plays on; + and - double or halve the speed. Everything
else works as in 'tsinspect open'.
`+"\n"+ui.KeysAbout())
	speed := fs.Float64("speed", 1, "play `N` times faster than recorded (0.25, 1, 10, ...)")
	prices := pricesFlag(fs)
	pos, err := cli.Args(fs, args, 1, 1, "one capture FILE")
	if err != nil {
		return err
	}
	if *speed <= 0 || *speed > 1024 {
		return cli.Usage("replay: --speed %g: want a factor above 0 and at most 1024", *speed)
	}
	tab, err := loadPrices(env, *prices)
	if err != nil {
		return err
	}
	ctx, stop := uiContext()
	defer stop()
	opts := ui.Options{Title: filepath.Base(pos[0]), Speed: *speed, Prices: tab, SaveDir: sessionfiles.SaveDir(os.Getenv)}
	return ui.ReplayFile(ctx, pos[0], opts, env.Stderr, func(err error) error { return readError("replay", pos[0], err) })
}

func runDemo(env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "demo", "", `
Open the capture bundled in tsinspect: a real Claude Code session recorded
against the built-in stand-in for the Messages API (no API key needed). It
loads a tool with a select: search, searches for a tool that does not
exist, calls a deferred tool whose schema it never loaded, starts a
subagent, and loses its prompt cache on the last turn.
`+"\n"+ui.KeysAbout())
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return cli.Usage("demo: unexpected argument %q (see 'tsinspect demo -h')", fs.Arg(0))
	}
	dir, err := os.MkdirTemp("", "tsinspect-demo-")
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "demo.db")
	if err := os.WriteFile(path, democapture.Bytes(), 0o600); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	ctx, stop := uiContext()
	defer stop()
	return ui.Open(ctx, path, ui.Options{Title: "demo", SaveDir: sessionfiles.SaveDir(os.Getenv)})
}

// uiContext is cancelled by SIGTERM or SIGHUP, so that the terminal is
// restored when the process is told to stop. (Ctrl-C is a key to the UI.)
func uiContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGHUP)
}
