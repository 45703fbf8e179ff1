package bench

import "time"

// Thresholds of the bottleneck analysis.
const (
	// busyShare is the machine CPU use above which the run counts as
	// CPU-bound: with a few percent of idle left, other processes and
	// scheduling gaps account for the rest.
	busyShare = 0.85
	// poolShare: reaching this share of the pool's ceiling means the pool binds.
	poolShare = 0.8
	// minGain is the throughput gain from a bigger pool that is more than
	// the run-to-run noise of a level (a few percent).
	minGain = 1.05
)

// Bottleneck is what limited throughput, derived from the measurements.
type Bottleneck struct {
	Pools []PoolFinding // the best level of each pool size, in the order measured
	// With two pool sizes or more, First and Largest are the first and last
	// measured; Gain is the best rate of Largest over First's, and
	// PoolLimited whether that gain is more than noise.
	First, Largest *PoolFinding
	Gain           float64
	PoolLimited    bool
}

// PoolFinding compares a pool's best level with two ceilings: the machine's
// cores (measured CPU use from /proc) and the sandbox pool (pool size over
// the time one invocation holds a sandbox, measured unloaded).
type PoolFinding struct {
	Best          ThroughputLevel
	PerInvocation time.Duration
	Ceiling       float64 // allocations/s the pool allows
	CeilingShare  float64 // Best.PerSecond / Ceiling
	CPUBound      bool
	PoolBound     bool
}

// AnalyseThroughput finds each pool size's best level and what bound it.
func AnalyseThroughput(levels []ThroughputLevel, perInvocation time.Duration) Bottleneck {
	var b Bottleneck
	index := map[int]int{}
	for _, l := range levels {
		i, ok := index[l.PoolSize]
		if !ok {
			i = len(b.Pools)
			index[l.PoolSize] = i
			b.Pools = append(b.Pools, PoolFinding{PerInvocation: perInvocation})
		}
		if l.PerSecond > b.Pools[i].Best.PerSecond {
			b.Pools[i].Best = l
		}
	}
	for i := range b.Pools {
		f := &b.Pools[i]
		f.Ceiling = float64(f.Best.PoolSize) / perInvocation.Seconds()
		f.CeilingShare = f.Best.PerSecond / f.Ceiling
		f.CPUBound = f.Best.CPU.Busy >= busyShare
		f.PoolBound = f.CeilingShare >= poolShare
	}
	if len(b.Pools) >= 2 {
		b.First, b.Largest = &b.Pools[0], &b.Pools[len(b.Pools)-1]
		b.Gain = b.Largest.Best.PerSecond / max(b.First.Best.PerSecond, 1e-9)
		b.PoolLimited = b.Gain > minGain
	}
	return b
}
