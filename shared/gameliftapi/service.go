package gameliftapi

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// Allocations is the allocate use case (allocation.Service).
type Allocations interface {
	Validate(req allocation.Request) error
	AllocateGameSession(ctx context.Context, req allocation.Request, p allocation.GameSessionPlacement) (allocation.Result, error)
	Get(ctx context.Context, gameInstanceID string) (gameinstance.Record, error)
}

var _ Allocations = (*allocation.Service)(nil)

// Placements keeps placements' inputs beside their records
// (store.GameSessionPlacements).
type Placements interface {
	// Keep stores p, or finds it stored with the same digest;
	// gameinstance.ErrOtherInputs when its id is stored with another.
	Keep(ctx context.Context, p gameinstance.GameSessionPlacement) error
	Get(ctx context.Context, id string) (gameinstance.GameSessionPlacement, error)
}

// Canceller cancels a queued placement and nothing else
// (lifecycle.Service.CancelPlacement).
type Canceller interface {
	CancelPlacement(ctx context.Context, id string) (gameinstance.Record, error)
}

// Queue is a game session queue (GAMELIFT_QUEUES).
type Queue struct {
	Regions           []string
	Timeout           time.Duration
	GameServerVersion string
	LatencyPolicies   []allocation.LatencyPolicy
}

// Service runs the three placement operations on the allocate use case.
type Service struct {
	Allocations Allocations
	Placements  Placements
	Cancel      Canceller
	Queues      map[string]Queue
	// Region is the deployment's AWS Region, for ARNs.
	Region string
	// InProgressWait bounds how long a call waits out another's claim on
	// its placement before it answers ThrottlingException.
	InProgressWait time.Duration
	Sleep          func(context.Context, time.Duration) error
}

// Start is StartGameSessionPlacement: the placement is kept, then
// allocated (or queued) like POST /v1/allocations with PlacementId as the
// gameInstanceId; the answer is PENDING for a new placement, as GameLift's
// always is, else the placement as it stands. account is the
// caller's AWS account for the queue's ARN ("" leaves it out).
func (s *Service) Start(ctx context.Context, in StartInput, account string) (obj, error) {
	name, arn := queueName(in.QueueName, s.Region, account)
	q, ok := s.Queues[name]
	if !ok {
		return nil, &Error{Type: NotFound, Message: fmt.Sprintf("no game session queue %q", name)}
	}
	req, err := request(in, q)
	if err != nil {
		return nil, err
	}
	if err := s.Allocations.Validate(req); err != nil {
		return nil, fromDomain(err)
	}
	kept := gameinstance.GameSessionPlacement{ID: in.PlacementID, Digest: digest(name, in), QueueName: name, QueueArn: arn,
		GameSessionArn: GameSessionArn(s.Region, in.PlacementID), Session: in.Session, Latencies: in.Latencies,
		LocationOrder: in.LocationOrder, FallbackStrategy: in.FallbackStrategy}
	switch err := s.Placements.Keep(ctx, kept); {
	case errors.Is(err, gameinstance.ErrOtherInputs):
		return nil, fromDomain(&gameinstance.Error{Code: gameinstance.CodeIdempotencyMismatch})
	case err != nil:
		return nil, fromDomain(err)
	}
	p := allocation.GameSessionPlacement{Digest: kept.Digest, Session: in.Session}
	var res allocation.Result
	err = s.retry(ctx, func() (err error) { res, err = s.Allocations.AllocateGameSession(ctx, req, p); return err })
	if err != nil && !failed(err) {
		return nil, fromDomain(err)
	}
	rec := res.Record
	if err != nil {
		// The outcome is recorded: a Failed placement, answered as one.
		if rec, err = s.Allocations.Get(ctx, in.PlacementID); err != nil {
			return nil, fromDomain(err)
		}
	}
	logging.FromContext(ctx).Info("placement started", "placementId", in.PlacementID, "queue", name, "state", rec.State, "created", res.Created)
	if res.Created {
		// GameLift answers a new placement PENDING, always: its clients
		// describe it until it is not. Placed already, it is FULFILLED on
		// their first Describe (a replay answers the placement as it is).
		rec.State, rec.Failure, rec.Server = gameinstance.StateQueued, nil, nil
	}
	return view(rec, &kept), nil
}

// failed: the allocation ended and its record holds the failure.
func failed(err error) bool {
	switch gameinstance.CodeOf(err) {
	case gameinstance.CodeNoCapacity, gameinstance.CodeRateLimited, gameinstance.CodeUpstreamTimeout, gameinstance.CodeAllocationFailed:
		return true
	}
	return false
}

// Describe is DescribeGameSessionPlacement.
func (s *Service) Describe(ctx context.Context, id string) (obj, error) {
	rec, kept, err := s.placement(ctx, id)
	if err != nil {
		return nil, err
	}
	return view(rec, kept), nil
}

// Stop is StopGameSessionPlacement: a pending placement is cancelled; a
// fulfilled one is InvalidRequestException and keeps its server; one that
// ended without a server is answered as it is.
func (s *Service) Stop(ctx context.Context, id string) (obj, error) {
	_, kept, err := s.placement(ctx, id)
	if err != nil {
		return nil, err
	}
	var rec gameinstance.Record
	if err := s.retry(ctx, func() (err error) { rec, err = s.Cancel.CancelPlacement(ctx, id); return err }); err != nil {
		return nil, fromDomain(err)
	}
	if gameinstance.PlacementStatus(rec) == gameinstance.PlacementFulfilled {
		return nil, invalid(fmt.Sprintf("placement %s is FULFILLED: its game session runs, and a fulfilled placement cannot be stopped", id))
	}
	logging.FromContext(ctx).Info("placement stopped", "placementId", id, "state", rec.State)
	return view(rec, kept), nil
}

// placement reads id's record and kept inputs; an instance that is no
// GameLift placement is NotFoundException, like an unknown id.
func (s *Service) placement(ctx context.Context, id string) (gameinstance.Record, *gameinstance.GameSessionPlacement, error) {
	rec, err := s.Allocations.Get(ctx, id)
	if err == nil && rec.Fingerprint.GameLift == "" {
		err = &gameinstance.Error{Code: gameinstance.CodeNotFound}
	}
	if gameinstance.CodeOf(err) == gameinstance.CodeNotFound {
		return rec, nil, &Error{Type: NotFound, Message: fmt.Sprintf("no game session placement %q", id)}
	}
	if err != nil {
		return rec, nil, fromDomain(err)
	}
	kept, err := s.Placements.Get(ctx, id)
	switch {
	case errors.Is(err, gameinstance.ErrNotFound):
		// Kept items outlive most games (RECORD_RETENTION); an older one
		// is answered from its record alone.
		logging.FromContext(ctx).Warn("placement's inputs not kept; answering from its record", "placementId", id)
		return rec, nil, nil
	case err != nil:
		return rec, nil, fromDomain(err)
	}
	return rec, &kept, nil
}

// retry runs call again while it answers ALLOCATION_IN_PROGRESS (another
// call, or the queue worker, holds the placement for a moment), waiting
// its Retry-After (at most a second) within InProgressWait.
func (s *Service) retry(ctx context.Context, call func() error) error {
	deadline := time.Now().Add(s.InProgressWait)
	for {
		err := call()
		var e *gameinstance.Error
		if !errors.As(err, &e) || e.Code != gameinstance.CodeAllocationInProgress {
			return err
		}
		wait := min(max(e.RetryAfter, 100*time.Millisecond), time.Second)
		if time.Now().Add(wait).After(deadline) {
			return err
		}
		if serr := s.Sleep(ctx, wait); serr != nil {
			return err
		}
	}
}

// queueName is a queue's name, given its name or ARN, and its ARN.
func queueName(nameOrArn, region, account string) (name, arn string) {
	if strings.HasPrefix(nameOrArn, "arn:") {
		_, name, _ = strings.Cut(nameOrArn, ":gamesessionqueue/")
		return name, nameOrArn
	}
	if account != "" {
		arn = fmt.Sprintf("arn:aws:gamelift:%s:%s:gamesessionqueue/%s", region, account, nameOrArn)
	}
	return nameOrArn, arn
}

// digest identifies everything a placement was asked: the same digest is
// the same placement asked again.
func digest(queue string, in StartInput) string {
	in.QueueName = queue // by name or by ARN, the same queue
	b, _ := json.Marshal(in)
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
