package main

import (
	"strings"

	"github.com/tsinspect/tsinspect/capture"
	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/recording"
)

func runCA(env *cli.Env, args []string) error {
	fs := cli.NewFlags(env, "ca", "[--ca-dir DIR] [--intercept HOST,...] [--rotate]", `
Show the local certificate authority that MITM recording uses, creating it
on first use: an ECDSA P-256 CA whose X.509 Name Constraints (critical)
permit only the intercepted hosts and exclude every IP address, so it cannot
vouch for any other site. Its key file is readable by you only (0600).

An existing CA is never replaced on its own: if --intercept names a host it
does not permit (or it has expired), ca says so and changes nothing.
--rotate makes a new CA permitting the old CA's hosts and the --intercept
ones, keeps the old files beside it with the time in their names
(tsinspect-ca.20261122T205650Z.pem), and says what it replaced. Every
client that trusted the old CA must then trust the new one.`)
	caDir := fs.String("ca-dir", "", "directory of the CA (default: tsinspect in your config dir)")
	intercept := fs.String("intercept", "", "extra hosts to intercept besides "+capture.DefaultHost+", comma-separated")
	rotate := fs.Bool("rotate", false, "replace the CA by a new one (new key, new fingerprint), keeping the old files beside it")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return cli.Usage("ca: unexpected argument %q", fs.Arg(0))
	}
	if err := recording.CheckHosts(splitList(*intercept)); err != nil {
		return cli.Usage("ca: %v", err)
	}
	if err := outsideClaudeDir("ca", "--ca-dir", *caDir); err != nil {
		return err
	}
	return capture.ShowCA(env.Stdout, *caDir, splitList(*intercept), *rotate)
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
