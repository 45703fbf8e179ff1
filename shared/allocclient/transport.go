package allocclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"
)

// call is one API call, however many tries it takes.
type call struct {
	method string
	path   string // escaped, below the base URL
	route  string // the route's template, for errors: ids stay out of them
	body   []byte
	header http.Header
	limit  int64
	// gameInstanceID names the instance an error answer's trace belongs to.
	gameInstanceID string
}

// answer is a response read in full.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// userAgent tells the service's logs which client called.
const userAgent = "allocsvc-allocclient/1"

// do tries k until it gets a 2xx or 304, a final answer, MaxAttempts tries
// or the end of ctx. Each try is a new request, signed afresh.
func (c *Client) do(ctx context.Context, k call) (answer, error) {
	op := k.method + " " + k.route
	for try := 1; ; try++ {
		ans, err := c.once(ctx, k)
		var pause time.Duration
		switch {
		case err == nil && (ans.status/100 == 2 || ans.status == http.StatusNotModified):
			return ans, nil
		case err == nil:
			e := errorOf(ans.status, ans.header, ans.body, op, k.gameInstanceID)
			e.tries = try
			if !e.Retryable() {
				return answer{}, e
			}
			err, pause = e, e.RetryAfter
		case errors.As(err, new(*finalError)) || ctx.Err() != nil:
			return answer{}, fmt.Errorf("allocclient: %s: %w", op, err)
		default: // transport: the request may or may not have arrived; a retry is safe
			err = fmt.Errorf("allocclient: %s: try %d: %w", op, try, err)
		}
		if try >= c.maxAttempts {
			return answer{}, err
		}
		if pause == 0 {
			pause = backoff(try)
		}
		pause = min(pause, c.maxWait)
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < pause {
			return answer{}, err // the retry could not happen in time; the answer is more useful than a timeout
		}
		if werr := c.sleep(ctx, pause); werr != nil {
			return answer{}, fmt.Errorf("%w (gave up waiting to retry: %w)", err, werr)
		}
	}
}

// finalError marks a failure a retry cannot cure.
type finalError struct{ err error }

func (e *finalError) Error() string { return e.err.Error() }
func (e *finalError) Unwrap() error { return e.err }

func final(format string, args ...any) error { return &finalError{fmt.Errorf(format, args...)} }

// backoff is the wait before try+1 when the answer named none: 250 ms
// doubling, jittered over its upper half so callers that failed together
// do not retry together.
func backoff(try int) time.Duration {
	d := 250 * time.Millisecond << min(try-1, 8)
	return d/2 + rand.N(d/2+1)
}

// once sends one try and reads its answer up to k.limit.
func (c *Client) once(ctx context.Context, k call) (answer, error) {
	var err error
	var body io.Reader
	if k.body != nil {
		body = bytes.NewReader(k.body)
	}
	u := *c.base
	u.RawPath = c.base.EscapedPath() + k.path
	if u.Path, err = url.PathUnescape(u.RawPath); err != nil {
		return answer{}, final("build the URL: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, k.method, u.String(), body)
	if err != nil {
		return answer{}, final("build the request: %w", err)
	}
	for name, v := range k.header {
		req.Header[name] = v
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	if k.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if err := c.sign(ctx, req, k.body); err != nil {
		return answer{}, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, k.limit+1))
	if err != nil {
		return answer{}, fmt.Errorf("read the %d answer: %w", resp.StatusCode, err)
	}
	if int64(len(raw)) > k.limit {
		return answer{}, final("%d answer: %w of %d bytes", resp.StatusCode, ErrAnswerTooLarge, k.limit)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: raw}, nil
}

// emptyPayloadHash is SHA-256 of no body.
var emptyPayloadHash = func() string { s := sha256.Sum256(nil); return hex.EncodeToString(s[:]) }()

// sign adds SigV4 for execute-api, dated now: a retry gets a fresh
// signature, never one API Gateway may already deem too old.
func (c *Client) sign(ctx context.Context, req *http.Request, body []byte) error {
	if c.creds == nil {
		return nil
	}
	creds, err := c.creds.Retrieve(ctx)
	if err != nil {
		return final("retrieve AWS credentials: %w", err)
	}
	hash := emptyPayloadHash
	if body != nil {
		s := sha256.Sum256(body)
		hash = hex.EncodeToString(s[:])
	}
	if err := c.signer.SignHTTP(ctx, creds, req, hash, "execute-api", c.region, time.Now()); err != nil {
		return final("sign the request: %w", err)
	}
	return nil
}
