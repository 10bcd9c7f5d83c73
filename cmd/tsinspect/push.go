package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/team"
)

const pushAbout = `
Push each session's facts to a team's PostgreSQL, redacted as 'report'
redacts: the listing row, each answer's tokens and cost, the advice facts.
'sessions', 'advise' and 'serve' read it with --from URL. Pushed again, a
session replaces itself; a push cut off goes on where it stopped. Keep the
password in PGPASSWORD or ~/.pgpass (see docs/team.md).

Example:
  tsinspect push --to postgres://tsinspect@db.example/team --follow`

func runPush(env *cli.Env, args []string) error {
	flags := cli.NewFlags(env, "push", "[DIR]... --to URL [--person NAME] [--machine NAME] [--redact default|strict|off] [--follow]", pushAbout)
	to := flags.String("to", "", "the team's store: `URL` postgres://USER@HOST[:PORT]/DATABASE")
	who, host := team.DefaultNames()
	person := flags.String("person", who, "who pushes: `NAME` (default: your login name)")
	machine := flags.String("machine", host, "which machine: `NAME` (default: its host name)")
	policyName := flags.String("redact", "default", "redaction `policy`: default, strict or off")
	follow := flags.Bool("follow", false, "keep pushing as Claude Code writes, until Ctrl-C")
	interval := flags.Duration("interval", 2*time.Second, "with --follow, look for changes every `D`")
	prices := pricesFlag(flags)
	pos, err := cli.Interspersed(flags, args)
	if err != nil {
		return err
	}
	policy, err := parsePolicy("push", "--redact", *policyName)
	if err != nil {
		return err
	}
	if _, err := team.ParseURL(*to); err != nil {
		return cli.Usage("push: --to: %v", err)
	}
	tab, err := loadPrices(env, *prices)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err := team.Push(ctx, team.PushOptions{URL: *to, Person: *person, Machine: *machine, Roots: pos, Policy: policy, Prices: tab,
		Version: version, Follow: *follow, Interval: *interval, Log: env.Stderr})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "pushed %d of %d sessions (%d answered turns) as %s@%s, redacted (%s); %d unchanged\n", st.Pushed, st.Sessions, st.Turns, *person, *machine, policy, st.Unchanged)
	return nil
}

// fromFlags are the flags of a command that reads a team's store.
func fromFlags(flags interface {
	String(name, value, usage string) *string
}) (from, person *string) {
	return flags.String("from", "", "read the team's store at `URL` (postgres://...; see 'tsinspect push') instead of this machine's sessions"),
		flags.String("person", "", "with --from, only `NAME`'s sessions")
}
