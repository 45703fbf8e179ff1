package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/wait"
)

// statusError is a non-2xx answer. Only a short head of the body is kept:
// enough to diagnose, too little to fill logs.
type statusError struct {
	Op     string
	Status int
	Body   string
}

func (e *statusError) Error() string {
	msg := fmt.Sprintf("%s: HTTP %d", e.Op, e.Status)
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

func statusOf(err error) int {
	var se *statusError
	if errors.As(err, &se) {
		return se.Status
	}
	return 0
}

// transient: worth another try. Connection failures, timeouts, 5xx,
// throttling and ALLOCATION_IN_PROGRESS (our callback can arrive before the
// backend has recorded the allocation) are; any other answer is final.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var se *statusError
	if errors.As(err, &se) {
		return se.Status >= 500 || se.Status == http.StatusTooManyRequests || se.Status == http.StatusRequestTimeout ||
			(se.Status == http.StatusConflict && strings.Contains(se.Body, "ALLOCATION_IN_PROGRESS"))
	}
	var de *decodeError
	return !errors.As(err, &de)
}

type decodeError struct{ err error }

func (e *decodeError) Error() string { return e.err.Error() }

// callJSON sends body (nil: none) with the given Authorization value and
// decodes a 2xx answer into out (nil: ignored).
func callJSON(ctx context.Context, client *http.Client, op, method, url, auth string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", auth)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s: reading the answer: %w", op, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		head := strings.TrimSpace(string(raw))
		if len(head) > 200 {
			head = head[:200] + "…"
		}
		return &statusError{Op: op, Status: resp.StatusCode, Body: head}
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return &decodeError{fmt.Errorf("%s: decoding the answer: %w", op, err)}
		}
	}
	return nil
}

// backoff doubles from lo to hi. Delays are jittered down to half so that
// a fleet restarted at once does not retry in lockstep.
type backoff struct {
	lo, hi, cur time.Duration
}

func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.lo
	} else {
		b.cur = min(2*b.cur, b.hi)
	}
	return b.cur/2 + rand.N(b.cur/2+1)
}

func (b *backoff) reset() { b.cur = 0 }

// retry calls fn until it succeeds, fails for good, or budget is spent.
func retry(ctx context.Context, budget time.Duration, b backoff, logf func(string, ...any), fn func(context.Context) error) error {
	deadline := time.Now().Add(budget)
	for {
		err := fn(ctx)
		if err == nil || !transient(err) || ctx.Err() != nil {
			return err
		}
		pause := b.next()
		if time.Now().Add(pause).After(deadline) {
			return fmt.Errorf("gave up after %s: %w", budget, err)
		}
		logf("%v; retrying in %s", err, pause.Round(time.Millisecond))
		if err := wait.Sleep(ctx, pause); err != nil {
			return err
		}
	}
}
