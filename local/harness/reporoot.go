package harness

import (
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
		if isFile(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("finding repo root: no go.mod in %s or any parent", wd)
		}
	}
}
