package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// RepoRoot returns the nearest directory at or above the working directory
// that contains go.mod. Tests run with the package directory as working
// directory, so this finds the module root from any package.
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding repo root: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("finding repo root: %w", err)
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("finding repo root: no go.mod in %s or any parent", wd)
		}
	}
}
