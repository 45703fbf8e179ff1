package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// Machine is what the figures were measured on.
type Machine struct {
	CPU, OS, Kernel, GoVersion, Java, Commit string
	Cores                                    int
	MemoryGiB                                float64
	LoadAvg                                  string // at the start: other work on the box skews every figure
	Date                                     time.Time
}

// DescribeMachine reads /proc, the Go and Java versions and the git commit
// of root. Missing pieces are reported as "unknown", never fatal.
func DescribeMachine(ctx context.Context, root string) Machine {
	m := Machine{Cores: runtime.NumCPU(), GoVersion: runtime.Version(), Date: time.Now().UTC()}
	m.CPU = firstField("/proc/cpuinfo", "model name")
	if kb := firstField("/proc/meminfo", "MemTotal"); kb != "unknown" {
		var n float64
		if _, err := fmt.Sscanf(kb, "%f kB", &n); err == nil {
			m.MemoryGiB = n / (1 << 20)
		}
	}
	m.OS = strings.Trim(firstField("/etc/os-release", "PRETTY_NAME="), `"`)
	m.Kernel = readTrim("/proc/sys/kernel/osrelease") + " " + runtime.GOARCH
	m.LoadAvg = readTrim("/proc/loadavg")
	// java -version prints to stderr.
	if out, err := exec.CommandContext(ctx, "java", "-version").CombinedOutput(); err == nil {
		m.Java, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	} else {
		m.Java = "unknown"
	}
	m.Commit = gitCommit(ctx, root)
	return m
}

// gitCommit is HEAD, marked when the tree has uncommitted changes (the
// figures then describe code that is not in that commit alone).
func gitCommit(ctx context.Context, root string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown (not a git checkout)"
	}
	commit := strings.TrimSpace(string(out))
	// Ignore the report itself: writing it must not mark the next run dirty.
	status, err := exec.CommandContext(ctx, "git", "-C", root, "status", "--porcelain", "--", ".", ":!docs/benchmarks.md").Output()
	if err == nil && len(strings.TrimSpace(string(status))) > 0 {
		commit += " + uncommitted changes"
	}
	return commit
}

// firstField returns the value of the first line starting with key in
// "key: value" or "KEY=value" form.
func firstField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, key); ok {
			rest = strings.TrimSpace(rest)
			rest = strings.TrimSpace(strings.TrimPrefix(rest, ":"))
			return rest
		}
	}
	return "unknown"
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
