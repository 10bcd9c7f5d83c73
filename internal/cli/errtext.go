package cli

import "strings"

// internalPackage reports whether name is one of the names tsinspect's
// packages put before their errors ("store: open x.db: ..."): useful in a
// stack of wrapped errors, noise to a user.
func internalPackage(name string) bool {
	// Every package of the module but the commands: TestEveryPackageNamed
	// fails when one is added without its name here.
	switch name {
	case "advice", "cachefile", "canonjson", "capture", "catalog", "claudetap", "cli", "claudetools", "claudetrace", "compare", "comparetest", "contentcoding", "corpus", "coverage", "crash",
		"decode", "democapture", "diffreport", "exchange", "filter", "fixtures", "gather", "golden", "har", "httpflow", "importer", "jsonvalid",
		"listenaddr", "longsession", "oddfiles", "mcpclient", "mcpserver", "memlimit", "mitmflow", "numfmt", "otlp", "outfile",
		"pcap", "pcaptest", "pgtest", "pricing", "rawbodies", "regfile", "realsession", "recon", "recording", "redact", "replayserver",
		"report", "session", "sessionfiles", "sharing", "shell", "source", "stats", "suggest", "store", "svgchart", "team", "termsafe", "testwait", "textout", "timeline", "tlsrec", "toolsearch", "tooltokens", "ui", "vcr", "view", "web":
		return true
	}
	return false
}

// PlainError drops the package names, and the operation names a package
// put before another package's error, from the start of an error message:
// "ui: open: store: open x.db: file does not exist" becomes
// "open x.db: file does not exist".
func PlainError(msg string) string {
	for {
		pkg, rest, ok := strings.Cut(msg, ": ")
		if !ok || !internalPackage(pkg) || rest == "" {
			return msg
		}
		msg = rest
		if op, inner, ok := strings.Cut(msg, ": "); ok && !strings.ContainsAny(op, " /") {
			if next, _, ok := strings.Cut(inner, ": "); ok && internalPackage(next) {
				msg = inner
			}
		}
	}
}
