package pricing

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ConfigPath is the price file tsinspect reads without --prices: prices.json
// in tsinspect's directory of the user's configuration directory
// ($XDG_CONFIG_HOME or ~/.config on Linux, ~/Library/Application Support on
// macOS, %AppData% on Windows). ok is false when the system names no such
// directory.
func ConfigPath() (path string, ok bool) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", false
	}
	return filepath.Join(dir, "tsinspect", "prices.json"), true
}

// LoadFor returns the table a command prices with: the file named by
// --prices (flagPath) when given, else the user's price file ([ConfigPath])
// when there is one, else the built-in table. A file that is there but
// cannot be read or parsed is an error, never skipped; one read but not
// understood says where the forms of a price file are told.
func LoadFor(flagPath string) (*Table, error) {
	if flagPath != "" {
		t, err := Load(flagPath)
		var pe *fs.PathError
		if err != nil && !errors.As(err, &pe) {
			return nil, fmt.Errorf("%w (the forms a price file takes: 'tsinspect prices -h')", err)
		}
		return t, err
	}
	path, ok := ConfigPath()
	if !ok {
		return Default(), nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return Default(), nil
	} else if err != nil {
		return nil, fmt.Errorf("pricing: your price file: %w", err)
	}
	t, err := Load(path)
	if err != nil {
		return nil, fmt.Errorf("%w (the price file in your configuration directory; move it away to use the built-in prices)", err)
	}
	t.FromConfig = true
	return t, nil
}
