package stack

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// FunctionDir maps a function's logical ID to its folder under functions/
// by the project's convention: AllocateFunction → functions/allocate.
func FunctionDir(logicalID string) string {
	return strings.ToLower(strings.TrimSuffix(logicalID, "Function"))
}

// Build compiles the named packages (paths relative to root, e.g.
// "functions/allocate") for this machine into binDir/<last element>, the
// way `make build` does for Lambda but runnable here.
func Build(ctx context.Context, root, binDir string, pkgs ...string) (map[string]string, error) {
	return BuildFor(ctx, root, binDir, runtime.GOARCH, pkgs...)
}

// BuildFor compiles the named packages for linux/goarch with the
// Makefile's flags into binDir/<last element>/bootstrap, and returns the
// binaries by last element. One `go build` per package keeps the output
// name "bootstrap", as in Lambda; the build cache makes repeats cheap.
func BuildFor(ctx context.Context, root, binDir, goarch string, pkgs ...string) (map[string]string, error) {
	out := map[string]string{}
	for _, pkg := range pkgs {
		if _, err := os.Stat(filepath.Join(root, pkg)); err != nil {
			return nil, fmt.Errorf("build %s: %w", pkg, err)
		}
		name := filepath.Base(pkg)
		bin := filepath.Join(binDir, name, "bootstrap")
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-tags", "lambda.norpc", "-ldflags=-s -w", "-o", bin, "./"+pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("build %s for linux/%s: %v\n%s", pkg, goarch, err, b)
		}
		out[name] = bin
	}
	return out, nil
}
