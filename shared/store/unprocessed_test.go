package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRetryUnprocessed(t *testing.T) {
	boom := errors.New("throttled")
	for _, tc := range []struct {
		name      string
		left      []int // what each call leaves
		callErr   error // the last call's error, when set
		wantCalls int
		wantErr   string
	}{
		{"done at once", []int{0}, nil, 1, ""},
		{"done on a retry", []int{3, 1, 0}, nil, 3, ""},
		{"retries run out", []int{5, 4, 3, 2}, nil, 3, "batch write T: 3 items still unprocessed after 2 retries"},
		{"a call fails", []int{2, 0}, boom, 2, "batch write T: throttled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := RetryUnprocessed(context.Background(), 2, time.Microsecond, "batch write T", "items", func() (int, error) {
				calls++
				if tc.callErr != nil && calls == len(tc.left) {
					return 0, tc.callErr
				}
				return tc.left[calls-1], nil
			})
			if calls != tc.wantCalls || (err == nil) != (tc.wantErr == "") || err != nil && err.Error() != tc.wantErr {
				t.Fatalf("%d calls, err %v; want %d calls, err %q", calls, err, tc.wantCalls, tc.wantErr)
			}
			if tc.callErr != nil && !errors.Is(err, tc.callErr) {
				t.Fatalf("err %v does not wrap the call's", err)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := RetryUnprocessed(ctx, 2, time.Hour, "batch get T", "keys", func() (int, error) { return 1, nil })
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "batch get T: ") {
		t.Fatalf("a cancelled pause: %v", err)
	}
}
