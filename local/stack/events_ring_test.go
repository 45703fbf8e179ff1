package stack

import (
	"fmt"
	"testing"
)

func TestEventRingKeepsTheLatestInOrder(t *testing.T) {
	tests := []struct {
		name      string
		added     int
		after     uint64
		wantFirst uint64 // 0 = none returned
		wantLen   int
	}{
		{"nothing yet", 0, 0, 0, 0},
		{"all of a few", 3, 0, 1, 3},
		{"only the newer", 3, 1, 2, 2},
		{"none newer", 3, 3, 0, 0},
		{"bounded to the latest", keptEvents + 10, 0, 11, keptEvents},
		{"after an evicted one", keptEvents + 10, 5, 11, keptEvents},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Components{}
			for i := range tt.added {
				c.events.add(Published{ID: fmt.Sprint(i + 1)}, fmt.Sprintf("event %d", i+1))
			}
			got := c.RecentEvents(tt.after)
			if len(got) != tt.wantLen {
				t.Fatalf("RecentEvents(%d) returned %d events, want %d", tt.after, len(got), tt.wantLen)
			}
			if len(got) == 0 {
				return
			}
			if got[0].Seq != tt.wantFirst {
				t.Errorf("first Seq = %d, want %d", got[0].Seq, tt.wantFirst)
			}
			for i, e := range got {
				if e.Seq != tt.wantFirst+uint64(i) || e.ID != fmt.Sprint(e.Seq) || e.Line != fmt.Sprintf("event %d", e.Seq) || e.Received.IsZero() {
					t.Fatalf("event %d = %+v: not in arrival order or incomplete", i, e)
				}
			}
		})
	}
}
