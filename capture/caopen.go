package capture

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tsinspect/tsinspect/internal/shell"
)

// CADir returns dir, or the default directory of the interception CA
// (DefaultCADir) when dir is "".
func CADir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	return DefaultCADir()
}

// OpenCA loads the CA in dir (the default directory when "") for the
// default host and the extra intercept hosts with load: LoadOrCreateCA to
// make it on first use, LoadCA to check an existing one without making
// one. An existing CA that does not permit the hosts, or has expired, is
// an error of one line that says how to replace it.
func OpenCA(dir string, intercept []string, load func(string, []string) (*CA, error)) (*CA, error) {
	dir, err := CADir(dir)
	if err != nil {
		return nil, err
	}
	ca, err := load(dir, InterceptHosts(intercept))
	var np *NotPermittedError
	var exp *ExpiredError
	switch {
	case errors.As(err, &np):
		return nil, fmt.Errorf("%w; the CA is kept: to replace it by one that also permits %s, run 'tsinspect ca --rotate --ca-dir %s --intercept %s' (clients that trust the old CA must then trust the new one)",
			err, strings.Join(np.Missing, ", "), shell.Quote(dir), strings.Join(np.Missing, ","))
	case errors.As(err, &exp):
		return nil, fmt.Errorf("%w; run 'tsinspect ca --rotate --ca-dir %s' to make a new one (the old files are kept)", err, shell.Quote(dir))
	}
	return ca, err
}
