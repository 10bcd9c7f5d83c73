package main

import (
	"flag"
	"strings"

	"github.com/tsinspect/tsinspect/internal/suggest"
)

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
