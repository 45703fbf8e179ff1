package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// MicroResult is the output of the Go micro-benchmarks next to the code.
type MicroResult struct {
	Command string
	Lines   []string // pkg:, cpu: and Benchmark lines, and any failure
	Took    time.Duration
	Err     error // the run failed (the report shows it instead of numbers)
}

// RunMicroBenchmarks runs every Benchmark function under shared/ for
// benchtime each (after building the test binaries), within 4 minutes.
func RunMicroBenchmarks(ctx context.Context, root, benchtime string, log io.Writer) MicroResult {
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	args := []string{"test", "-run", "^$", "-bench", ".", "-benchmem", "-benchtime=" + benchtime, "./shared/..."}
	res := MicroResult{Command: "go test -run '^$' -bench . -benchmem -benchtime=" + benchtime + " ./shared/..."}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	start := time.Now()
	out, err := cmd.CombinedOutput()
	res.Took = time.Since(start)
	if err != nil {
		res.Err = fmt.Errorf("%s: %w", res.Command, err)
	}
	seenCPU := false
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
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
