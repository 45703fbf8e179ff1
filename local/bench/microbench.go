package bench

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// MicroResult is the output of the Go micro-benchmarks next to the code:
// the pkg:, cpu: and Benchmark lines and any failure; Err when the run
// failed (the report shows it instead of numbers).
type MicroResult struct {
	Command string
	Lines   []string
	Took    time.Duration
	Err     error
}

// RunMicroBenchmarks runs every Benchmark function under shared/ for
// benchtime each (after building the test binaries), within 4 minutes.
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
