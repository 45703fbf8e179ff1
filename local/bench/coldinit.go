package bench

// The cold-start figure's init split, read from GODEBUG=inittrace=1.

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

const ourModule = "github.com/gamefabric-alloc/allocsvc/"

// traceInits starts every series held to the goal n more times with
// GODEBUG=inittrace=1 and keeps the medians.
func traceInits(ctx context.Context, plan []*ColdStartSeries, n int) error {
	for _, s := range plan {
		if s.realistic {
			continue
		}
		var traces []InitTrace
		for i := range n {
			m, err := s.startOnce(ctx, i, []string{"GODEBUG=inittrace=1"})
			if err != nil {
				return fmt.Errorf("coldstart: %s with GODEBUG=inittrace=1: %w", s.name, err)
			}
			traces = append(traces, ParseInitTrace(m.logs))
		}
		s.Inits = medianTrace(traces)
	}
	return nil
}

// InitTrace is the package init of one start (or the medians of Starts):
// the clock time by whose packages they are — the AWS SDK's, ours (and
// main), the rest — and the package whose init took longest. It is what
// linking a package costs every start before main runs.
type InitTrace struct {
	Starts           int // 0 when not traced
	SDK, Ours, Other time.Duration
	SDKBytes         int64
	Largest          string
	LargestClock     time.Duration
}

// ParseInitTrace sums the init lines in a function's output.
func ParseInitTrace(out string) InitTrace {
	t := InitTrace{Starts: 1}
	for line := range strings.Lines(out) {
		// init github.com/x/y @2.5 ms, 0.57 ms clock, 586696 bytes, 3151 allocs
		f := strings.Fields(line)
		if len(f) < 8 || f[0] != "init" || !strings.HasPrefix(f[2], "@") || f[5] != "ms" || f[6] != "clock," {
			continue
		}
		ms, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			continue
		}
		bytes, _ := strconv.ParseInt(f[7], 10, 64)
		clock, pkg := time.Duration(math.Round(ms*float64(time.Millisecond))), f[1]
		switch {
		case strings.HasPrefix(pkg, "github.com/aws/aws-sdk-go-v2/"), strings.HasPrefix(pkg, "github.com/aws/smithy-go"):
			t.SDK += clock
			t.SDKBytes += bytes
		case strings.HasPrefix(pkg, ourModule), pkg == "main":
			t.Ours += clock
		default:
			t.Other += clock
		}
		if clock > t.LargestClock {
			t.Largest, t.LargestClock = pkg, clock
		}
	}
	return t
}

// medianTrace is each figure's median; Largest is the package most often
// the largest, with its median time.
func medianTrace(ts []InitTrace) InitTrace {
	if len(ts) == 0 {
		return InitTrace{}
	}
	out := InitTrace{Starts: len(ts),
		SDK:      medianOf(ts, func(t InitTrace) time.Duration { return t.SDK }),
		Ours:     medianOf(ts, func(t InitTrace) time.Duration { return t.Ours }),
		Other:    medianOf(ts, func(t InitTrace) time.Duration { return t.Other }),
		SDKBytes: medianOf(ts, func(t InitTrace) int64 { return t.SDKBytes }),
	}
	votes := map[string]int{}
	for _, t := range ts {
		if votes[t.Largest]++; votes[t.Largest] > votes[out.Largest] {
			out.Largest = t.Largest
		}
	}
	largest := slices.DeleteFunc(slices.Clone(ts), func(t InitTrace) bool { return t.Largest != out.Largest })
	out.LargestClock = medianOf(largest, func(t InitTrace) time.Duration { return t.LargestClock })
	return out
}

func medianOf[T cmp.Ordered](ts []InitTrace, get func(InitTrace) T) T {
	xs := make([]T, len(ts))
	for i, t := range ts {
		xs[i] = get(t)
	}
	slices.Sort(xs)
	return xs[(len(xs)-1)/2]
}
