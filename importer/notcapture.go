package importer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tsinspect/tsinspect/internal/shell"
)

// NotCapture is the error of command cmd ("turns", "report", ...) that
// could not read the capture at path. When path is a file (or directory)
// of a format 'import' reads, such as a HAR file or a pcap, it says so in
// one line with the command that imports it and the one to run then;
// otherwise it is err.
func NotCapture(cmd, path string, err error) error {
	what := Importable(path)
	if what == "" {
		return err
	}
	db := importTarget(path)
	return fmt.Errorf("%s is %s, not a tsinspect capture: import it with 'tsinspect import %s --db %s', then run 'tsinspect %s %s'",
		path, what, shell.Quote(path), shell.Quote(db), cmd, shell.Quote(db))
}

// importTarget names the capture to import the file or directory at path
// into: a file's name with .db for its extension, a directory's with .db
// added; or, when that is taken, the name with .db added.
func importTarget(path string) string {
	path = filepath.Clean(path)
	db := path + ".db"
	if st, err := os.Stat(path); err == nil && !st.IsDir() && filepath.Ext(path) != "" {
		db = strings.TrimSuffix(path, filepath.Ext(path)) + ".db"
	}
	if _, err := os.Lstat(db); err == nil || db == path {
		db = path + ".db"
	}
	return db
}
