package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// Machine is what the figures were measured on. Missing pieces read
// "unknown", never fail the run.
type Machine struct {
	CPU, OS, Kernel, GoVersion, Java, Commit string
	Cores                                    int
	MemoryGiB                                float64
	LoadAvg                                  string // at the start: other work on the box skews every figure
	Date                                     time.Time
}

// DescribeMachine reads /proc, /etc/os-release, the Go and Java versions and
// the git commit of root.
func DescribeMachine(ctx context.Context, root string) Machine {
	m := Machine{CPU: "unknown", OS: "unknown", Kernel: "unknown", Java: "unknown", Cores: runtime.NumCPU(),
		GoVersion: runtime.Version(), LoadAvg: loadAverage(true), Date: time.Now().UTC(), Commit: gitCommit(ctx, root)}
	if fs, err := procfs.NewDefaultFS(); err == nil {
		if cpus, err := fs.CPUInfo(); err == nil && len(cpus) > 0 {
			m.CPU = cpus[0].ModelName
		}
		if mem, err := fs.Meminfo(); err == nil && mem.MemTotal != nil {
			m.MemoryGiB = float64(*mem.MemTotal) / (1 << 20) // kB
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b)) + " " + runtime.GOARCH
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
				m.OS = strings.Trim(strings.TrimSpace(v), `"`)
			}
		}
	}
	if out, err := exec.CommandContext(ctx, "java", "-version").CombinedOutput(); err == nil { // it prints to stderr
		m.Java, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	}
	return m
}

// loadAverage is the 1-minute load average, or with all the 1-, 5- and
// 15-minute ones; "unknown" where /proc cannot tell.
func loadAverage(all bool) string {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return "unknown"
	}
	l, err := fs.LoadAvg()
	switch {
	case err != nil:
		return "unknown"
	case all:
		return fmt.Sprintf("%.2f %.2f %.2f", l.Load1, l.Load5, l.Load15)
	}
	return fmt.Sprintf("%.2f", l.Load1)
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
