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
)

// The registry's HTTP calls: the GameFabric side of the server. The
// calls to our backend go through shared/gameserver.

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

// callJSON sends body (nil: none) with the given Authorization value; the
// answer's body is read (bounded) only for an error.
func callJSON(ctx context.Context, client *http.Client, op, method, url, auth string, body any) error {
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
	return nil
}

// backoff doubles from lo to hi. Delays are jittered down to half so that
// a fleet restarted at once does not register in lockstep.
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
