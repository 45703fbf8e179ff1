package store

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// written reports whether stored is exactly what the write in made, at
// version: every attribute it set has the value it set, every attribute it
// removed is gone. It is how a conditional write recognises itself when
// the SDK retried it after a lost reply and the retry failed the condition
// against the write's own result. Attributes written only if absent
// (createdAt) are not compared.
func written(rec gameinstance.Record, stored map[string]types.AttributeValue, version int64) bool {
	if stored == nil {
		return false
	}
	want, err := Encode(rec)
	if err != nil {
		return false
	}
	want["version"] = &types.AttributeValueMemberN{Value: formatInt(version)}
	delete(want, "createdAt")
	for name, v := range want {
		if !sameValue(v, stored[name]) {
			return false
		}
	}
	for _, name := range optional {
		if _, set := want[name]; !set && stored[name] != nil {
			return false
		}
	}
	return true
}

// sameValue compares two attribute values by what they hold, so an empty
// map and a NULL written by different paths compare as DynamoDB stores them.
func sameValue(a, b types.AttributeValue) bool {
	if a == nil || b == nil {
		return a == b
	}
	var va, vb any
	if attributevalue.Unmarshal(a, &va) != nil || attributevalue.Unmarshal(b, &vb) != nil {
		return false
	}
	ja, errA := json.Marshal(va)
	jb, errB := json.Marshal(vb)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// The outcome write has a few seconds (allocation's outcome reserve), not
// the SDK default's backoff of up to 20 s, so it retries sooner and more
// often, and gives up on an attempt that stalls rather than on the write.
const (
	outcomeAttempts       = 5
	outcomeAttemptTimeout = time.Second
	outcomeBackoffBase    = 50 * time.Millisecond
	outcomeBackoffMax     = 400 * time.Millisecond
)

var outcomeRetryer = retry.NewStandard(func(o *retry.StandardOptions) {
	o.MaxAttempts = outcomeAttempts
	o.Backoff = retry.BackoffDelayerFunc(func(attempt int, _ error) (time.Duration, error) {
		d := min(outcomeBackoffBase<<attempt, outcomeBackoffMax)
		return d/2 + rand.N(d/2+1), nil // full jitter over the upper half
	})
	// The client-side retry quota would refuse these retries after a burst
	// of failures elsewhere; this write is the one that must get through.
	o.RateLimiter = ratelimit.None
})

// outcomeWrite applies the outcome retryer and a per-attempt timeout to one call.
func outcomeWrite(o *dynamodb.Options) {
	o.Retryer = outcomeRetryer
	o.APIOptions = append(o.APIOptions, attemptTimeout(outcomeAttemptTimeout))
}

// attemptTimeout bounds each attempt of a call, inside the SDK's retry loop.
// An attempt that runs out of time fails with an error the retryer retries;
// the SDK would treat its own context deadline as a cancellation and stop.
func attemptTimeout(d time.Duration) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Finalize.Insert(middleware.FinalizeMiddlewareFunc("AttemptTimeout",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				actx, cancel := context.WithTimeout(ctx, d)
				defer cancel()
				out, md, err := next.HandleFinalize(actx, in)
				if err != nil && ctx.Err() == nil && actx.Err() != nil {
					err = attemptTimedOut{d}
				}
				return out, md, err
			}), "Retry", middleware.After)
	}
}

// attemptTimedOut is one attempt that took longer than its timeout.
type attemptTimedOut struct{ d time.Duration }

func (e attemptTimedOut) Error() string        { return "attempt timed out after " + e.d.String() }
func (e attemptTimedOut) RetryableError() bool { return true }
func (e attemptTimedOut) Timeout() bool        { return true }
