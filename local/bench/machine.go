package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// Machine is what the figures were measured on; missing pieces read
// "unknown".
type Machine struct {
	CPU, OS, Kernel, GoVersion, Java, Commit string
	Cores                                    int
	MemoryGiB                                float64
	LoadAvg                                  string
	Date                                     time.Time
}

// DescribeMachine reads /proc, os-release, the Go and Java versions and git.
func DescribeMachine(ctx context.Context, root string) Machine {
	m := Machine{CPU: "unknown", OS: "unknown", Kernel: "unknown", Java: "unknown", Cores: runtime.NumCPU(),
		GoVersion: runtime.Version(), LoadAvg: loadAverage(true), Date: time.Now().UTC(), Commit: "unknown (not a git checkout)"}
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
	b, _ := os.ReadFile("/etc/os-release")
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			m.OS = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	if out, err := exec.CommandContext(ctx, "java", "-version").CombinedOutput(); err == nil { // it prints to stderr
		m.Java, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	}
	if out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--short=12", "HEAD").Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
		// Marked when the tree has uncommitted changes, the report apart.
		status, err := exec.CommandContext(ctx, "git", "-C", root, "status", "--porcelain", "--", ".", ":!docs/benchmarks.md").Output()
		if err == nil && len(strings.TrimSpace(string(status))) > 0 {
			m.Commit += " + uncommitted changes"
		}
	}
	return m
}

// loadAverage is the 1-minute load average, or all three.
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

// MicroResult is the Go micro-benchmarks' pkg:, cpu: and Benchmark lines.
type MicroResult struct {
	Command string
	Lines   []string
	Took    time.Duration
	Err     error
}

// RunMicroBenchmarks runs every Benchmark under shared/ for benchtime each.
func RunMicroBenchmarks(ctx context.Context, root, benchtime string, log io.Writer) MicroResult {
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	res := MicroResult{Command: "go test -run '^$' -bench . -benchmem -benchtime=" + benchtime + " ./shared/..."}
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", ".", "-benchmem", "-benchtime="+benchtime, "./shared/...")
	cmd.Dir = root
	start := time.Now()
	out, err := cmd.CombinedOutput()
	res.Took = time.Since(start)
	if err != nil {
		res.Err = fmt.Errorf("%s: %w", res.Command, err)
	}
	seenCPU := false
	for line := range strings.Lines(string(out)) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "cpu:"):
			if !seenCPU {
				res.Lines = append(res.Lines, line)
			}
			seenCPU = true
		case strings.HasPrefix(line, "pkg:"), strings.HasPrefix(line, "Benchmark"),
			strings.HasPrefix(line, "FAIL"), strings.HasPrefix(line, "---"), strings.Contains(line, "panic"),
			err != nil && strings.Contains(line, ".go:"):
			res.Lines = append(res.Lines, line)
		}
	}
	progress(log, "micro-benchmarks: %d lines in %s", len(res.Lines), res.Took.Round(time.Second))
	return res
}
