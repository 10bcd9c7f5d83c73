package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tsinspect/tsinspect/internal/suggest"
)

// NewFlags makes a FlagSet of command name whose help (synopsis, about,
// the flags) goes to env's standard output and whose errors come back as
// usage errors rather than being printed.
func NewFlags(env *Env, name, synopsis, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(env.Stdout, "Usage: tsinspect %s\n\n%s\n", strings.TrimSpace(name+" "+synopsis), strings.TrimSpace(about))
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n == 0 {
			return // no "Flags:" heading over nothing
		}
		fmt.Fprintf(env.Stdout, "\nFlags:\n")
		fs.SetOutput(env.Stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// Parse parses args, turning -h into a printed help and any other error
// into a one-line usage error. The help goes to standard output on -h
// only: after a mistyped flag it would land in whatever standard output
// was redirected to.
func Parse(fs *flag.FlagSet, args []string) error {
	help := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = help
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			help()
			return err
		}
		return Usage("%s: %v%s (see 'tsinspect %s -h')", fs.Name(), err, flagSuggestion(fs, err), fs.Name())
	}
	return nil
}

// Given reports whether the flag name was given on the command line (fs
// parsed), whatever its value.
func Given(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// Interspersed parses flags and positional arguments in any order
// ("turns s.db --json" as "turns --json s.db"); everything after "--" is
// positional.
func Interspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for i, a := range args {
		if a == "--" {
			args, rest = args[:i], args[i+1:]
			break
		}
	}
	var pos []string
	for {
		if err := Parse(fs, args); err != nil {
			return nil, err
		}
		left := fs.Args()
		if len(left) == 0 {
			break
		}
		pos = append(pos, left[0])
		args = left[1:]
	}
	return append(pos, rest...), nil
}

// Args parses args as Interspersed does and checks that between min and
// max (-1: any number) positional arguments were given; what says what
// is wanted in the usage error ("one capture FILE").
func Args(fs *flag.FlagSet, args []string, min, max int, what string) ([]string, error) {
	pos, err := Interspersed(fs, args)
	if err == nil && (len(pos) < min || max >= 0 && len(pos) > max) {
		err = Usage("%s: want %s (see 'tsinspect %s -h')", fs.Name(), what, fs.Name())
	}
	return pos, err
}

// flagSuggestion returns " (did you mean --NAME?)" for the error
// "flag provided but not defined: -NAME" when fs has a flag close to it.
func flagSuggestion(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return ""
	}
	name = strings.TrimLeft(name, "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if c := suggest.Closest(name, names); c != "" {
		return " (did you mean --" + c + "?)"
	}
	return ""
}
