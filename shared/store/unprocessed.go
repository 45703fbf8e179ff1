package store

import (
	"context"
	"fmt"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/wait"
)

// RetryUnprocessed makes a batch call and makes it again for what DynamoDB
// left unprocessed (it may, under throttling, answer a batch partly), at
// most retries more times, the pause doubling from backoff. call makes one
// batch call and says how many items it left; op names the call in errors
// ("batch write <table>") and items what it counts ("items", "keys").
func RetryUnprocessed(ctx context.Context, retries int, backoff time.Duration, op, items string, call func() (left int, err error)) error {
	for attempt := 0; ; attempt++ {
		left, err := call()
		switch {
		case err != nil:
			return fmt.Errorf("%s: %w", op, err)
		case left == 0:
			return nil
		case attempt == retries:
			return fmt.Errorf("%s: %d %s still unprocessed after %d retries", op, left, items, retries)
		}
		if err := wait.Sleep(ctx, backoff<<attempt); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
}
