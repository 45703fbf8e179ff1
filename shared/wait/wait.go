// Package wait pauses unless a context ends first: the one helper the
// bounded retries and pacing loops of this module share.
package wait

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends, and then returns ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
