package importer

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tsinspect/tsinspect/internal/numfmt"
)

// Outcome says what the import of the file called name into the capture
// db came to: the line to tell the user, or an error; partial reports
// that the error comes with exchanges kept all the same.
func (r *Report) Outcome(name, db string) (line string, partial bool, err error) {
	present := ""
	if r.Present > 0 {
		present = fmt.Sprintf("%d %s already in the capture, skipped", r.Present, numfmt.Plural(r.Present, "exchange", "exchanges"))
	}
	if p := r.Problem(); p != "" {
		kept := fmt.Sprintf("kept %d %s", r.Imported, numfmt.Plural(r.Imported, "exchange", "exchanges"))
		if r.Incomplete > 0 {
			kept += fmt.Sprintf(" (%d incomplete)", r.Incomplete)
		}
		return "", r.Imported > 0, fmt.Errorf("import %s: %s; %s", name, p, kept)
	}
	if r.Imported == 0 && r.Present > 0 {
		return fmt.Sprintf("imported nothing from %s (%s) into %s: %s", name, r.Format, db, present), false, nil
	}
	if r.Imported == 0 {
		msg := fmt.Sprintf("import %s: no HTTP exchanges found", name)
		if n := r.Notes(); n != "" {
			msg += " (skipped " + n + ")"
		}
		return "", false, errors.New(msg)
	}
	line = fmt.Sprintf("imported %d %s from %s (%s", r.Imported, numfmt.Plural(r.Imported, "exchange", "exchanges"), name, r.Format)
	if n := decryptedCount(r.Decrypted); n > 0 {
		line += fmt.Sprintf(", %d TLS %s decrypted", n, numfmt.Plural(n, "connection", "connections"))
	}
	line += ") into " + db
	if present != "" {
		line += "; " + present
	}
	if n := r.Notes(); n != "" {
		line += "; skipped " + n
	}
	if len(r.Limits) > 0 {
		line += "; " + r.Format + " lacks: " + strings.Join(r.Limits, "; ")
	}
	if r.Redacted > 0 {
		line += fmt.Sprintf("; %d %s found in bodies replaced by fingerprints", r.Redacted, numfmt.Plural(r.Redacted, "credential", "credentials"))
	}
	return line, false, nil
}

func decryptedCount(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
