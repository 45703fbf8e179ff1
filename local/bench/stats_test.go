package bench

import (
	"testing"
	"time"
)

func TestSummarizeNearestRank(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	s := Summarize(ds)
	if s.N != 100 || s.P50 != 50*time.Millisecond || s.P99 != 99*time.Millisecond || s.Max != 100*time.Millisecond {
		t.Fatalf("Summarize = %+v", s)
	}
	if s.Mean != 50500*time.Microsecond {
		t.Fatalf("mean = %v", s.Mean)
	}
	if got := Summarize(nil); got.N != 0 {
		t.Fatalf("empty: %+v", got)
	}
}
