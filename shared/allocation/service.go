package allocation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/region"
	"github.com/gamefabric-alloc/allocsvc/shared/wait"
)

// Store persists records. Claim and Finish are conditional writes; each
// recognises its own earlier success (a write saved whose reply was lost,
// retried by the SDK) and reports it as success.
type Store interface {
	// Claim writes rec (state Allocating) unless the game instance has a
	// record that is neither Failed (a match's or a GameLift placement's
	// Failed record is final) nor
	// an Allocating claim whose lease expired before takeoverBefore; then
	// it returns *ClaimConflictError holding that record. It returns the
	// claim as stored: its createdAt (an earlier record's survives) and
	// version.
	Claim(ctx context.Context, rec gameinstance.Record, takeoverBefore time.Time) (gameinstance.Record, error)
	// Finish writes the outcome if rec.ClaimID still holds the claim
	// (ErrClaimLost otherwise) and returns the stored record. rec.Version
	// is the claim's as Claim returned it, or 0 when unknown.
	Finish(ctx context.Context, rec gameinstance.Record) (gameinstance.Record, error)
	// Get returns the record or ErrNotFound.
	Get(ctx context.Context, gameInstanceID string) (gameinstance.Record, error)
	// Resume writes the claim rec only while the instance is Queued under
	// ticket (a queued placement's next attempt); else *ClaimConflictError
	// with the record found, or ErrNotFound. Like Claim, it recognises its
	// own write saved with its reply lost.
	Resume(ctx context.Context, rec gameinstance.Record, ticket string) error
}

// Allocator hands out game servers: a GameFabric Allocator or an Agones
// allocator service, behind an adapter (shared/allocators) that speaks its
// wire format. Failures are *UpstreamError.
type Allocator interface {
	Allocate(ctx context.Context, token string, req UpstreamRequest) (Allocated, error)
}

// Tokens supplies an Allocator's bearer token.
type Tokens interface {
	Token(ctx context.Context) (string, error)
	Refresh(ctx context.Context, stale string) (string, error)
}

// RegionHealth is the circuit breaker over regions (PlayFab-style region
// states). Options without one try every region (regionhealth.Off is the
// same, for callers that pick one).
type RegionHealth interface {
	// Admit decides for each region, in order, whether to try it now.
	Admit(ctx context.Context, regions []string) []region.Verdict
	// Observe records an attempt's outcome for the region.
	Observe(ctx context.Context, region string, ok bool)
}

// Metrics observes finished allocations; Options without one emit nothing.
type Metrics interface {
	Allocated(o Outcome)
}

// everyRegion tries every region and records nothing.
type everyRegion struct{}

func (everyRegion) Admit(_ context.Context, regions []string) []region.Verdict {
	out := make([]region.Verdict, len(regions))
	for i := range out {
		out[i].Try = true
	}
	return out
}

func (everyRegion) Observe(context.Context, string, bool) {}

// Off says there is no region health to record into.
func (everyRegion) Off() bool { return true }

type noMetrics struct{}

func (noMetrics) Allocated(Outcome) {}

// Options configures a Service. The settings (the durations and
// Defaults.MaxAttempts) come complete from config.LoadAllocate, which
// resolves each default once; NewService refuses a zero one rather than
// filling it in. A caller without the configuration (the tests) starts
// from DefaultOptions.
type Options struct {
	Store Store
	// Upstreams says which Allocator serves each region. When nil, every
	// region is served by Allocator with Tokens, under its own name.
	Upstreams      Upstreams
	Allocator      Allocator
	Tokens         Tokens
	Defaults       Defaults
	BackendAddress string
	// The timing settings (config.Allocate.Allocation). Budget bounds one
	// allocation from the invocation's start: attempts, backoff, token
	// refreshes and both writes.
	defaults.Allocation
	// Retry is how 429s are retried; nil = DefaultRetryPolicy (not a
	// setting: nothing configures it but the tests).
	Retry *RetryPolicy
	// Now, Sleep and Random are the clock, the pause and the token source;
	// nil = the real ones.
	Now     func() time.Time
	Sleep   func(context.Context, time.Duration) error
	Random  func([]byte) error
	Metrics Metrics
	Health  RegionHealth
	// Rooms is the room pool; nil places every instance on a whole server.
	Rooms Rooms
	// Queue is the placement queue; nil fails every allocation fast, as a
	// queue timeout of 0 does.
	Queue Queue
}

// Service allocates game servers.
type Service struct{ o Options }

// DefaultOptions are the documented defaults of the allocation's settings,
// each from shared/defaults, for whoever builds a Service without the
// configuration (the tests): set Store and the rest on a copy.
func DefaultOptions() Options {
	return Options{Allocation: defaults.AllocationDefaults, Defaults: Defaults{defaults.RequestDefaults}}
}

// NewService builds the service on complete settings; a zero one is a
// wiring mistake (a zero budget would fail every allocation), so it
// panics at the cold start instead of allocating with it.
func NewService(o Options) *Service {
	if o.AttemptTimeout <= 0 || o.Lease <= 0 || o.Retention <= 0 || o.LinkTimeout <= 0 || o.Budget <= 0 || o.Defaults.MaxAttempts <= 0 {
		panic(fmt.Sprintf("allocation.NewService: incomplete settings (config.LoadAllocate resolves them; tests start from DefaultOptions): "+
			"AttemptTimeout %s, Lease %s, Retention %s, LinkTimeout %s, Budget %s, MaxAttempts %d",
			o.AttemptTimeout, o.Lease, o.Retention, o.LinkTimeout, o.Budget, o.Defaults.MaxAttempts))
	}
	if o.Retry == nil {
		o.Retry = &DefaultRetryPolicy
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = wait.Sleep
	}
	if o.Random == nil {
		o.Random = cryptoRandom
	}
	if o.Health == nil {
		o.Health = everyRegion{}
	}
	if o.Metrics == nil {
		o.Metrics = noMetrics{}
	}
	if o.Upstreams == nil {
		o.Upstreams = oneAllocator{allocator: o.Allocator, tokens: o.Tokens}
	}
	return &Service{o: o}
}

// Result is a successful allocation; Created is false for a replay.
type Result struct {
	Record  gameinstance.Record
	Created bool
}

// Get returns the record for a game instance.
func (s *Service) Get(ctx context.Context, gameInstanceID string) (gameinstance.Record, error) {
	if err := gameinstance.ValidateID(gameInstanceID); err != nil {
		return gameinstance.Record{}, err
	}
	rec, err := s.o.Store.Get(ctx, gameInstanceID)
	if errors.Is(err, gameinstance.ErrNotFound) {
		return gameinstance.Record{}, &gameinstance.Error{Code: gameinstance.CodeNotFound, Message: fmt.Sprintf("no allocation for game instance %q", gameInstanceID)}
	}
	if err != nil {
		return gameinstance.Record{}, unavailable("the allocation store is unavailable; retry", err)
	}
	return rec, nil
}

// Allocate allocates a game server for req.GameInstanceID at most once:
// claim, try the plan's regions, record the outcome, all inside one budget.
func (s *Service) Allocate(ctx context.Context, req Request) (Result, error) {
	return s.allocate(ctx, req, origin{})
}

// AllocateMatch is Allocate for a FlexMatch match's request
// (shared/matchmaking): its record says so (Fingerprint.Match), and an API
// caller's request for the same id does not replay it.
func (s *Service) AllocateMatch(ctx context.Context, req Request) (Result, error) {
	return s.allocate(ctx, req, origin{match: true})
}

func (s *Service) allocate(ctx context.Context, req Request, o origin) (Result, error) {
	b := s.budgetFor(ctx)
	spec, err := s.o.Defaults.resolve(req, o)
	if err != nil {
		return Result{}, err
	}
	uctx, cancel := context.WithDeadline(ctx, b.upstream)
	defer cancel()
	// The tokens are read before claiming, so a Secrets Manager failure
	// leaves no record behind. They are usually cached, so this costs nothing.
	creds, err := s.readCredentials(uctx, spec.Plan)
	if err != nil {
		return Result{}, err
	}
	rec, tokens, err := s.newClaim(spec)
	if err != nil {
		return Result{}, err
	}
	spec.roomsListed = s.listRoomsAhead(uctx, spec, tokens)
	started := rec.CreatedAt
	claimed, existing, err := s.claim(uctx, b, rec)
	if existing != nil || err != nil {
		return replayOf(existing), err
	}
	// Written as stored, the outcome need not be read back (Store.Finish).
	rec.Version, rec.CreatedAt = claimed.Version, claimed.CreatedAt
	run := s.runPlan(uctx, b, rec, spec, creds, tokens)
	if run.tookRooms() {
		rec.Version = 0 // a take (and a give-back) moved it on: read the outcome back
	}
	q := gameinstance.Queue{StartedAt: started, Until: started.Add(spec.QueueTimeout)}
	if delay, ok := s.waits(spec, q, run); ok {
		// Without a message sent, nothing would retry: then the outcome
		// is answered as it stands, a failure like any other.
		if res, queued, err := s.requeue(ctx, b, rec, run, o.message(rec.GameInstanceID, req), q, delay); queued {
			return res, err
		}
	}
	return s.finish(ctx, b, rec, run)
}

// listRoomsAhead starts listing the first region's free rooms, to be
// read while the claim is written (see RoomLister); nil when the plan will
// not ask the room pool there. The listing ends with ctx at the latest.
func (s *Service) listRoomsAhead(ctx context.Context, spec Spec, tokens [][]string) <-chan RoomListing {
	lister, ok := s.o.Rooms.(RoomLister)
	if !ok || spec.Fingerprint.Dedicated || len(spec.Plan) == 0 || len(tokens[0]) < 2 {
		return nil
	}
	pool := gameinstance.RoomPool{Region: spec.Plan[0].Region, Environment: spec.Environment, ArmadaSet: spec.ArmadaSet}
	listed := make(chan RoomListing, 1)
	go func() { listed <- lister.ListRooms(ctx, pool, spec.Scheduling) }()
	return listed
}

// tookRooms: a room was taken for the claim (and maybe given back), each
// a write of the instance's record that moved its version on.
func (run planRun) tookRooms() bool {
	for _, a := range run.attempts {
		if a.outcome == outcomeRoom {
			return true
		}
	}
	return false
}

// finish records the plan's outcome on the claim rec, then region health
// and metrics, and answers: the record, or the failure it holds.
func (s *Service) finish(ctx context.Context, b budget, rec gameinstance.Record, run planRun) (Result, error) {
	out, stored, err := s.settle(ctx, b, rec, run)
	if err != nil {
		return Result{}, err
	}
	if out.State == gameinstance.StateFailed {
		return Result{}, failureOf(out, run.attempts)
	}
	return Result{Record: stored, Created: true}, nil
}

// settle records the plan's outcome on the claim rec, then region health
// and metrics: the outcome, and the record as stored.
func (s *Service) settle(ctx context.Context, b budget, rec gameinstance.Record, run planRun) (out, stored gameinstance.Record, err error) {
	if run.abort != nil {
		if errors.Is(run.abort, errAnswerLost) {
			s.observe(ctx, b, run)
		}
		return rec, rec, s.aborted(ctx, rec, run)
	}
	out = s.outcome(rec, run)
	stored, err = s.record(ctx, b, out)
	s.observe(ctx, b, run)
	s.o.Metrics.Allocated(run.metrics(out, wallNow().Sub(b.start)))
	return out, stored, err
}

// outcome is rec with the plan's result applied, ready to be recorded.
func (s *Service) outcome(rec gameinstance.Record, run planRun) gameinstance.Record {
	// A queued placement's claim carries the attempts of its earlier runs.
	rec.Attempts, rec.CandidateTokenHashes = run.after(rec.Attempts), nil
	rec.UpdatedAt = s.o.Now()
	if run.server != nil {
		rec.State, rec.Region, rec.FallbackUsed = gameinstance.StateAllocated, run.region, run.step > 0
		rec.Server, rec.Placement, rec.RoomServer = run.server, run.placement, run.roomServer
		rec.PartnerGameTokenHash = gameinstance.HashToken(run.partnerToken)
		rec.AllocatedAt = rec.UpdatedAt
		// A live instance does not expire; the health sweep marks it
		// Unhealthy if its server never links.
		rec.ExpiresAt = time.Time{}
		return rec
	}
	code := failureCode(run.attempts)
	if run.timedOut {
		code = gameinstance.CodePlacementTimedOut
	}
	rec.State, rec.Failure = gameinstance.StateFailed, &gameinstance.Failure{Code: code, Message: failureMessage(code, run.attempts)}
	rec.ExpiresAt, rec.HealthDeadline = rec.UpdatedAt.Add(s.o.Retention), time.Time{}
	return rec
}

func replayOf(rec *gameinstance.Record) Result {
	if rec == nil {
		return Result{}
	}
	return Result{Record: *rec}
}
