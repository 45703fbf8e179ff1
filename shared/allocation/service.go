package allocation

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/wait"
)

// Store persists records. Claim and Finish are conditional writes.
type Store interface {
	// Claim writes rec (state Allocating) unless the game instance has a
	// record that is neither Failed nor an Allocating claim whose lease
	// expired before takeoverBefore; then it returns *ClaimConflictError
	// holding that record.
	Claim(ctx context.Context, rec Record, takeoverBefore time.Time) error
	// Finish writes the outcome if rec.ClaimID still holds the claim
	// (ErrClaimLost otherwise) and returns the stored record.
	Finish(ctx context.Context, rec Record) (Record, error)
	// Get returns the record or ErrNotFound.
	Get(ctx context.Context, gameInstanceID string) (Record, error)
}

// Allocator is GameFabric's allocate endpoint.
type Allocator interface {
	Allocate(ctx context.Context, token string, req gamefabric.AllocateRequest) (*gamefabric.Allocation, error)
}

// Tokens supplies the allocator bearer token.
type Tokens interface {
	Token(ctx context.Context) (string, error)
	Refresh(ctx context.Context, stale string) (string, error)
}

// Verdict is the region-health breaker's answer for one region.
type Verdict struct {
	Try    bool
	Reason string // why it is skipped, or that it is a half-open probe
}

// RegionHealth is the circuit breaker over regions (PlayFab-style region
// states); nil tries every region.
type RegionHealth interface {
	// Admit decides for each region, in order, whether to try it now.
	Admit(ctx context.Context, regions []string) []Verdict
	// Observe records an attempt's outcome for the region.
	Observe(ctx context.Context, region string, ok bool)
}

// Metrics observes finished allocations; nil emits nothing.
type Metrics interface {
	Allocated(rec Record, skippedUnhealthy int)
}

// Options configures a Service. Zero durations take the defaults noted.
type Options struct {
	Store          Store
	Allocator      Allocator
	Tokens         Tokens
	Defaults       Defaults
	BackendAddress string
	AttemptTimeout time.Duration // 10s
	Lease          time.Duration // 60s
	Retention      time.Duration // 7 days
	LinkTimeout    time.Duration // 2m
	Retry          *RetryPolicy  // DefaultRetryPolicy
	Now            func() time.Time
	Sleep          func(context.Context, time.Duration) error
	Random         func([]byte) error // crypto/rand by default
	Metrics        Metrics
	Health         RegionHealth
}

// Service allocates game servers.
type Service struct{ o Options }

// leaseMargin keeps our own work well inside the claim's lease, so a live
// invocation never has its claim taken over. finishReserve is the time kept
// back from the Lambda deadline to record the outcome.
const (
	leaseMargin   = 5 * time.Second
	finishReserve = time.Second
	finishTimeout = 5 * time.Second
	minAttempt    = 50 * time.Millisecond
)

// NewService fills in defaults.
func NewService(o Options) *Service {
	if o.AttemptTimeout <= 0 {
		o.AttemptTimeout = 10 * time.Second
	}
	if o.Lease <= 0 {
		o.Lease = 60 * time.Second
	}
	if o.Retention <= 0 {
		o.Retention = 7 * 24 * time.Hour
	}
	if o.LinkTimeout <= 0 {
		o.LinkTimeout = 2 * time.Minute
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
	return &Service{o: o}
}

// Result is a successful allocation; Created is false for a replay.
type Result struct {
	Record  Record
	Created bool
}

// Get returns the record for a game instance.
func (s *Service) Get(ctx context.Context, gameInstanceID string) (Record, error) {
	if err := ValidateGameInstanceID(gameInstanceID); err != nil {
		return Record{}, err
	}
	rec, err := s.o.Store.Get(ctx, gameInstanceID)
	if errors.Is(err, ErrNotFound) {
		return Record{}, &Error{Code: CodeNotFound, Message: fmt.Sprintf("no allocation for game instance %q", gameInstanceID)}
	}
	if err != nil {
		return Record{}, unavailable("the allocation store is unavailable; retry", err)
	}
	return rec, nil
}

// Allocate allocates a game server for req.GameInstanceID at most once.
func (s *Service) Allocate(ctx context.Context, req Request) (Result, error) {
	spec, err := s.o.Defaults.Resolve(req)
	if err != nil {
		return Result{}, err
	}
	// The token is read before claiming, so a Secrets Manager failure leaves
	// no record behind. It is usually cached, so this costs nothing.
	token, err := s.o.Tokens.Token(ctx)
	if isPermanent(err) {
		return Result{}, internal("the allocator credential is missing or unusable", err)
	}
	if err != nil {
		return Result{}, unavailable("the allocator credential could not be read; nothing was allocated; retry", err)
	}

	partnerTokens, err := s.partnerTokens(spec)
	if err != nil {
		return Result{}, internal("mint partner game tokens", err)
	}
	claimID, err := mintToken(s.o.Random)
	if err != nil {
		return Result{}, internal("mint claim id", err)
	}
	now := s.o.Now()
	rec := Record{
		GameInstanceID:       spec.GameInstanceID,
		State:                StateAllocating,
		Fingerprint:          spec.Fingerprint,
		Environment:          spec.Environment,
		ArmadaSet:            spec.ArmadaSet,
		PartnerGameTokenHash: HashToken(partnerTokens[0]),
		CandidateTokenHashes: candidateHashes(spec, partnerTokens),
		ClaimID:              claimID,
		LatencyRelaxed:       spec.LatencyRelaxed,
		LeaseExpiresAt:       now.Add(s.o.Lease),
		CreatedAt:            now,
		UpdatedAt:            now,
		ExpiresAt:            now.Add(s.o.Retention),
		// The health sweep watches the claim from the start, so a claim
		// whose outcome is never recorded cannot stay Allocating forever.
		// An Allocated outcome keeps this deadline: the index entry is
		// written once, not moved.
		HealthDeadline: now.Add(s.o.LinkTimeout),
	}
	// An expired claim is in doubt until its server had time to link back:
	// taking it over sooner could allocate a second server.
	if err := s.o.Store.Claim(ctx, rec, now.Add(-s.o.LinkTimeout)); err != nil {
		return s.onConflict(spec, now, err)
	}

	deadline := s.deadline(ctx)
	payload := Payload{
		GameInstanceID:       spec.GameInstanceID,
		PartnerSocialToken:   spec.PartnerSocialToken,
		PragmaBackendAddress: s.o.BackendAddress,
		ServerArgs:           spec.Fingerprint.ServerArgs,
	}
	redact := redactor(append([]string{token, spec.PartnerSocialToken}, partnerTokens...)...)
	var attempts []Attempt
	verdicts := s.admit(ctx, spec.Plan)
	skipped := 0
	for i, step := range spec.Plan {
		if v := verdicts[i]; !v.Try {
			skipped++
			attempts = append(attempts, Attempt{Region: step.Region, Reason: step.Reason + "; skipped: " + v.Reason, outcome: outcomeSkipped})
			continue
		} else if v.Reason != "" {
			step.Reason += "; " + v.Reason
		}
		payload.PartnerGameToken = partnerTokens[i]
		alloc, tried, tok := s.tryRegion(ctx, deadline, token, step.Region, spec, payload, redact)
		token = tok
		for j := range tried {
			tried[j].Reason = step.Reason
		}
		attempts = append(attempts, tried...)
		if s.o.Health != nil {
			if alloc != nil {
				s.o.Health.Observe(ctx, step.Region, true)
			} else if regionFault(tried[len(tried)-1]) {
				s.o.Health.Observe(ctx, step.Region, false)
			}
		}
		if alloc != nil {
			rec.State, rec.Region, rec.FallbackUsed = StateAllocated, step.Region, i > 0
			rec.Server = &Server{Address: alloc.Address, IP: alloc.IP, Ports: alloc.Ports}
			rec.PartnerGameTokenHash = HashToken(partnerTokens[i])
			break
		}
	}
	rec.Attempts, rec.CandidateTokenHashes = attempts, nil
	rec.UpdatedAt = s.o.Now()
	var failure *Error
	if rec.State == StateAllocated {
		// A live instance does not expire; the health sweep marks it
		// Unhealthy if its server never links.
		rec.ExpiresAt = time.Time{}
	} else {
		code := failureCode(attempts)
		failure = &Error{Code: code, Message: failureMessage(code), Attempts: attempts}
		rec.State, rec.Failure = StateFailed, &Failure{Code: code, Message: failure.Message}
		rec.ExpiresAt, rec.HealthDeadline = rec.UpdatedAt.Add(s.o.Retention), time.Time{}
	}

	// Record the outcome even if the caller has gone away: the upstream
	// allocation happened and a replay must find it.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	if s.o.Metrics != nil {
		s.o.Metrics.Allocated(rec, skipped)
	}
	stored, err := s.o.Store.Finish(fctx, rec)
	if err != nil {
		// The log line is the operator's record of a server we could not
		// write down; it carries no token.
		logging.FromContext(ctx).Error("recording allocation outcome failed",
			"gameInstanceId", rec.GameInstanceID, "state", rec.State, "region", rec.Region, "server", rec.Server, "error", err)
		if errors.Is(err, ErrClaimLost) || rec.State != StateAllocated {
			return Result{}, internal("recording the allocation failed", err)
		}
		return Result{}, s.outcomeUnrecorded(rec, err)
	}
	if failure != nil {
		return Result{}, failure
	}
	return Result{Record: stored, Created: true}, nil
}

// partnerTokens is the link-back credential for each plan step. Minted
// ones differ per step: a step that times out may still have allocated a
// server, and with its own token that orphan cannot link to the instance
// the next step's server holds. A caller's token is used for every step.
func (s *Service) partnerTokens(spec Spec) ([]string, error) {
	tokens := make([]string, max(len(spec.Plan), 1))
	for i := range tokens {
		tokens[i] = spec.PartnerGameToken
		if tokens[i] == "" {
			var err error
			if tokens[i], err = mintToken(s.o.Random); err != nil {
				return nil, err
			}
		}
	}
	return tokens, nil
}

// candidateHashes are the tokens a server allocated under this claim may
// hold, kept while the outcome is unknown so an in-doubt claim's server can
// still link (see lifecycle.Policy.Link).
func candidateHashes(spec Spec, tokens []string) []string {
	if spec.PartnerGameToken != "" {
		return nil
	}
	hashes := make([]string, len(tokens))
	for i, t := range tokens {
		hashes[i] = HashToken(t)
	}
	return hashes
}

func (s *Service) onConflict(spec Spec, now time.Time, err error) (Result, error) {
	var conflict *ClaimConflictError
	if !errors.As(err, &conflict) {
		return Result{}, unavailable("the allocation store is unavailable; nothing was allocated; retry", err)
	}
	existing := conflict.Existing
	if existing.Fingerprint != spec.Fingerprint {
		return Result{}, &Error{Code: CodeIdempotencyMismatch, Message: fmt.Sprintf(
			"game instance %q was already requested with a different desiredRegion, gameServerVersion or serverArgs", spec.GameInstanceID)}
	}
	if existing.State == StateAllocating {
		if now.Before(existing.LeaseExpiresAt) {
			return Result{}, &Error{Code: CodeAllocationInProgress, RetryAfter: secondsUntil(existing.LeaseExpiresAt, now),
				Message: fmt.Sprintf("an allocation for game instance %q is in progress; retry later", spec.GameInstanceID)}
		}
		return Result{}, &Error{Code: CodeAllocationInProgress, RetryAfter: secondsUntil(existing.LeaseExpiresAt.Add(s.o.LinkTimeout), now),
			Message: fmt.Sprintf("an earlier allocation for game instance %q may have succeeded without being recorded; "+
				"its game server has until LINK_TIMEOUT to link back before a retry allocates afresh", spec.GameInstanceID)}
	}
	return Result{Record: existing}, nil
}

// outcomeUnrecorded answers an allocation GameFabric made but the store
// would not record. The claim stays Allocating and in doubt: the game
// server's link-back adopts it, or the health sweep fails it once the
// server had time to link; either way a retry never allocates a second
// server meanwhile.
func (s *Service) outcomeUnrecorded(rec Record, err error) *Error {
	e := unavailable(fmt.Sprintf("GameFabric allocated a game server in %s but recording it failed; retry with the same "+
		"gameInstanceId: the retry returns that server once it links back, and allocates afresh only if it never does", rec.Region), err)
	e.RetryAfter = secondsUntil(rec.LeaseExpiresAt, s.o.Now())
	return e
}

// secondsUntil is a Retry-After: whole seconds, at least one.
func secondsUntil(t, now time.Time) time.Duration {
	return max(time.Duration(math.Ceil(t.Sub(now).Seconds()))*time.Second, time.Second)
}
