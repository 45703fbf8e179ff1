package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// written is how a version-conditioned write whose retry failed its
// condition tells its own saved write from someone else's.
func TestWritten(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 123456789, time.UTC)
	rec := gameinstance.Record{GameInstanceID: "gi", State: gameinstance.StateLinked, ClaimID: "c", Version: 4,
		LinkedAt: t0, LastHeartbeatAt: t0, CreatedAt: t0.Add(-time.Minute), UpdatedAt: t0, HealthDeadline: t0.Add(90 * time.Second),
		Server: &gameinstance.Server{Address: "1.2.3.4:7777", IP: "1.2.3.4", Ports: map[string]int{"game": 7777}}}
	stored := func(edit func(*gameinstance.Record), version int64) map[string]types.AttributeValue {
		r := rec
		if edit != nil {
			edit(&r)
		}
		av, err := Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		av["version"] = &types.AttributeValueMemberN{Value: formatInt(version)}
		return av
	}
	tests := []struct {
		name   string
		stored map[string]types.AttributeValue
		want   bool
	}{
		{"exactly what was written", stored(nil, 5), true},
		{"createdAt is only written if absent", stored(func(r *gameinstance.Record) { r.CreatedAt = t0.Add(-time.Hour) }, 5), true},
		{"another write since", stored(nil, 6), false},
		{"another heartbeat at another time", stored(func(r *gameinstance.Record) { r.LastHeartbeatAt = t0.Add(time.Second) }, 5), false},
		{"an attribute the write removed is there", stored(func(r *gameinstance.Record) { r.EndReason = "IWON" }, 5), false},
		{"the server moved", stored(func(r *gameinstance.Record) { r.Server = &gameinstance.Server{Address: "1.2.3.4:7778", IP: "1.2.3.4"} }, 5), false},
		{"nothing stored", nil, false},
	}
	for _, tc := range tests {
		if got := written(rec, tc.stored, 5); got != tc.want {
			t.Errorf("%s: written = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestUpdateRefusesAnItemDynamoDBWouldReject(t *testing.T) {
	s := NewGameInstances(nil, "T")
	big := gameinstance.Record{GameInstanceID: "gi", Fingerprint: gameinstance.Fingerprint{ServerArgs: strings.Repeat("x", MaxItemBytes)}}
	if _, err := s.update(big); !errors.Is(err, gameinstance.ErrTooLarge) {
		t.Fatalf("update = %v, want ErrTooLarge", err)
	}
	if _, err := s.update(gameinstance.Record{GameInstanceID: "gi"}); err != nil {
		t.Fatalf("a small record: %v", err)
	}
}

// slowHandler stalls its first attempts, then answers.
type slowHandler struct{ stalls, calls int }

func (h *slowHandler) HandleFinalize(ctx context.Context, in middleware.FinalizeInput) (middleware.FinalizeOutput, middleware.Metadata, error) {
	h.calls++
	if h.calls <= h.stalls {
		<-ctx.Done()
		return middleware.FinalizeOutput{}, middleware.Metadata{}, ctx.Err()
	}
	return middleware.FinalizeOutput{Result: "ok"}, middleware.Metadata{}, nil
}

// A stalled attempt becomes a retryable error, not a cancellation the SDK
// would give up on; the caller's own deadline stays a cancellation.
func TestAttemptTimeout(t *testing.T) {
	stack := middleware.NewStack("test", nil)
	stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("Retry", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
		return next.HandleFinalize(ctx, in)
	}), middleware.After)
	if err := attemptTimeout(20 * time.Millisecond)(stack); err != nil {
		t.Fatal(err)
	}
	mw, ok := stack.Finalize.Get("AttemptTimeout")
	if !ok {
		t.Fatal("AttemptTimeout not in the Finalize step")
	}
	h := &slowHandler{stalls: 1}
	_, _, err := mw.HandleFinalize(context.Background(), middleware.FinalizeInput{}, h)
	var retryable interface{ RetryableError() bool }
	if !errors.As(err, &retryable) || !retryable.RetryableError() {
		t.Fatalf("stalled attempt: %v, want a retryable error", err)
	}
	if _, _, err := mw.HandleFinalize(context.Background(), middleware.FinalizeInput{}, h); err != nil {
		t.Fatalf("next attempt: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := mw.HandleFinalize(ctx, middleware.FinalizeInput{}, &slowHandler{stalls: 1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller: %v, want the cancellation", err)
	}
	// The outcome write's options install it and a retryer of its own.
	var o dynamodb.Options
	outcomeWrite(&o)
	if o.Retryer == nil || o.Retryer.MaxAttempts() != outcomeAttempts || len(o.APIOptions) != 1 {
		t.Fatalf("outcome options = %+v", o)
	}
}
