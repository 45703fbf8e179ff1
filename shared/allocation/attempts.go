package allocation

import (
	"context"
	"errors"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/region"
)

// planRun is what trying the plan's regions produced.
type planRun struct {
	attempts []attempt
	// server is where the instance was placed, in region by plan step
	// step with partnerToken; nil when every attempt failed. placement
	// says how, and roomServer is the game-server record of a room.
	server       *gameinstance.Server
	placement    gameinstance.Placement
	roomServer   string
	region       string
	step         int
	partnerToken string
	skipped      int // regions skipped as unhealthy
	// observed is each tried region's outcome for region health, recorded
	// after the outcome so health writes never delay it.
	observed []observation
	// known are the regions the deployment knows (see Outcome.RegionLabel).
	known map[string]bool
	// orphans are the regions of attempts that may have left a server
	// allocated upstream.
	orphans []string
	// abort: the room pool could not tell whether the claim holds a room,
	// or the claim was lost; the outcome is not recorded (see RoomResult).
	abort error
	// timedOut: a queued placement's deadline came before a server.
	timedOut bool
}

type observation struct {
	region string
	ok     bool
}

// runPlan tries the plan's regions in order until one places the instance,
// within ctx (which ends at the budget's upstream deadline): in each
// region a free room first (unless the request is dedicated), then the
// region's Allocator.
func (s *Service) runPlan(ctx context.Context, b budget, rec gameinstance.Record, spec Spec, creds *credentials, tokens [][]string) planRun {
	// FALLBACK_REGION is configured, so known from the start.
	run := planRun{known: map[string]bool{}}
	if s.o.Defaults.Region != "" {
		run.known[s.o.Defaults.Region] = true
	}
	payload := spec.payload(s.o.BackendAddress)
	var all []string
	for _, t := range tokens {
		all = append(all, t...)
	}
	redact := redactor(append(append(creds.all(), spec.PartnerSocialToken), all...)...)
	// limitedBy: an Allocator that rate-limited this allocation, and the
	// region where it did. Its other regions share the limit, so asking
	// them now would only be answered 429 again.
	limitedBy := map[string]string{}
	verdicts := s.admit(ctx, spec.Plan)
	for i, step := range spec.Plan {
		v, up := verdicts[i], creds.upstreams[i]
		if !up.KeepsRooms && s.tryRooms(ctx, b, rec, spec, step, i, payload, tokens[i], &run) {
			return run
		}
		if v.Known {
			run.known[step.Region] = true
		}
		if skip, ok := notAsked(step, up, v, creds.err[up.ID], limitedBy[up.ID]); ok {
			if skip.outcome == outcomeSkipped {
				run.skipped++
			}
			run.attempts = append(run.attempts, skip)
			continue
		} else if v.Reason != "" {
			step.Reason += "; " + v.Reason
		}
		payload.PartnerGameToken = tokens[i][0]
		got, tried := s.tryRegion(ctx, b.upstream, up, creds, step.Region, spec, payload, redact)
		s.noteOrphans(ctx, spec, step, tried, &run)
		run.attempts = append(run.attempts, tried...)
		if got.Server != nil {
			run.observed = append(run.observed, observation{step.Region, true})
			placement := gameinstance.PlacementAllocator
			if got.Room {
				// A room the Allocator keeps (Agones' rooms Counter): the
				// room pool holds no record of it, so RoomServer stays empty.
				placement = gameinstance.PlacementRoom
			}
			run.place(got.Server, placement, "", step.Region, i, tokens[i][0])
			return run
		}
		last := tried[len(tried)-1]
		if last.outcome == outcomeRateLimited {
			limitedBy[up.ID] = step.Region
		}
		// Only a known region's failures count: a name a caller invents
		// must not create region-health records.
		// Nor does a queued placement's lack of capacity: a drained buffer
		// is not a faulty region, and waiting for it is what queueing is.
		if regionFault(last) && run.known[step.Region] && !(spec.QueueTimeout > 0 && last.outcome == outcomeCapacity) {
			run.observed = append(run.observed, observation{step.Region, false})
		}
		if up.Kind == gameinstance.AllocatorAgones && answerLost(last) {
			// Agones may have allocated a server that holds this step's
			// token, and it keeps no record to ask: asking again, here or
			// in another region, could allocate a second one. The claim
			// stays in doubt until that server links (or the sweep fails
			// it); the region's fault still counts for its breaker.
			run.abort = errAnswerLost
			return run
		}
	}
	return run
}

// errAnswerLost: an Agones allocator was asked and its answer never came
// (a timeout, a reset, its own 504).
var errAnswerLost = errors.New("the Agones allocator's answer was lost after it was asked")

// answerLost: the call reached the allocator and no answer came back.
func answerLost(a attempt) bool {
	return a.SuspectedOrphan && (a.kind == UpstreamTimeout || a.kind == UpstreamTransport)
}

// place records where the instance went.
func (run *planRun) place(server *gameinstance.Server, p gameinstance.Placement, roomServer, region string, step int, token string) {
	run.server, run.placement, run.roomServer = server, p, roomServer
	run.region, run.step, run.partnerToken = region, step, token
	run.known[region] = true
}

// tryRooms asks the room pool for a free room in step's region; it reports
// whether the plan is over (placed, or aborted). Rooms are tried in every
// region of the plan, whatever the breaker says of its Allocator: a
// server already allocated does not depend on it.
func (s *Service) tryRooms(ctx context.Context, b budget, rec gameinstance.Record, spec Spec, step PlanStep, i int, payload Payload, tokens []string, run *planRun) bool {
	if s.o.Rooms == nil || spec.Fingerprint.Dedicated || len(tokens) < 2 {
		return false
	}
	payloads := make([]Payload, len(tokens)-1)
	for k := range payloads {
		payloads[k] = payload
		payloads[k].PartnerGameToken = tokens[k+1]
	}
	req := RoomRequest{GameInstanceID: spec.GameInstanceID, ClaimID: rec.ClaimID, Scheduling: spec.Scheduling,
		Pool:     gameinstance.RoomPool{Region: step.Region, Environment: spec.Environment, ArmadaSet: spec.ArmadaSet},
		Payloads: payloads, Deadline: b.upstream}
	if i == 0 {
		req.Listed = spec.roomsListed
	}
	res := s.o.Rooms.Place(ctx, req)
	tried := make([]attempt, len(res.Attempts))
	for k, a := range res.Attempts {
		tried[k] = attempt{Attempt: a, outcome: outcomeRoom}
	}
	s.noteOrphans(ctx, spec, step, tried, run)
	run.attempts = append(run.attempts, tried...)
	switch {
	case res.Err != nil:
		run.abort = res.Err
		return true
	case res.Server != nil:
		run.place(res.Server, gameinstance.PlacementRoom, res.Address, step.Region, i, tokens[res.Try+1])
		return true
	}
	return false
}

// noteOrphans logs and counts the attempts that may have left a server
// (or a session) that nobody uses.
func (s *Service) noteOrphans(ctx context.Context, spec Spec, step PlanStep, tried []attempt, run *planRun) {
	for j := range tried {
		tried[j].Reason, tried[j].MaxPlayerLatencyMs = step.Reason, spec.Cap
		if tried[j].SuspectedOrphan {
			run.orphans = append(run.orphans, step.Region)
			logging.FromContext(ctx).Warn("suspected orphan: a game server may hold a session this attempt never heard of",
				"gameInstanceId", spec.GameInstanceID, "region", step.Region, "placement", tried[j].Placement,
				"status", tried[j].Status, "error", tried[j].Error)
		}
	}
}

// notAsked is the attempt recording why a plan step is not tried, and
// whether it is not: the breaker skips its region, its Allocator already
// rate-limited this allocation (in region limitedIn), or its Allocator's
// credential (up.Credential) could not be read (tokenErr).
func notAsked(step PlanStep, up Upstream, v region.Verdict, tokenErr error, limitedIn string) (attempt, bool) {
	a := attempt{Attempt: gameinstance.Attempt{Region: step.Region, Reason: step.Reason, AllocatorKind: up.Kind}}
	switch {
	case !v.Try:
		a.Reason, a.outcome = step.Reason+"; skipped: "+v.Reason, outcomeSkipped
	case limitedIn != "":
		a.Error = "not tried: the Allocator serving it rate-limited this allocation (429 in " + limitedIn + ")"
		a.RateLimited, a.outcome = true, outcomeRateLimitSkipped
	case tokenErr != nil:
		a.Error = gameinstance.Clip("not tried: the Allocator's "+up.Credential+" could not be read: "+tokenErr.Error(), maxErrorText)
		a.outcome = outcomeNoToken
	default:
		return attempt{}, false
	}
	return a, true
}

// admit asks the breaker about the plan's regions, within healthTimeout.
// When it would skip every one, all are tried anyway: failing without
// trying helps nobody.
func (s *Service) admit(ctx context.Context, plan []PlanStep) []region.Verdict {
	verdicts := make([]region.Verdict, len(plan))
	for i := range verdicts {
		verdicts[i].Try = true
	}
	regions := make([]string, len(plan))
	for i, step := range plan {
		regions[i] = step.Region
	}
	hctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	got := s.o.Health.Admit(hctx, regions)
	if len(got) != len(plan) {
		return verdicts
	}
	for _, v := range got {
		if v.Try {
			return got
		}
	}
	for i := range verdicts {
		verdicts[i].Known = got[i].Known
		verdicts[i].Reason = "unhealthy, tried anyway: every candidate region is unhealthy"
	}
	return verdicts
}

// observe records the plan's region outcomes after the allocation's own
// outcome, within what is left of the budget and at most healthTimeout.
func (s *Service) observe(ctx context.Context, b budget, run planRun) {
	if off, ok := s.o.Health.(interface{ Off() bool }); len(run.observed) == 0 || ok && off.Off() {
		return
	}
	hctx, cancel := detached(ctx, b.end, healthTimeout)
	defer cancel()
	if hctx.Err() != nil {
		logging.FromContext(ctx).Warn("region health not recorded: the allocation's budget is spent", "observations", len(run.observed))
		return
	}
	for _, o := range run.observed {
		s.o.Health.Observe(hctx, o.region, o.ok)
	}
}

// regionFault: the attempt says something about the whole region's
// health. Auth, bad requests and the Allocator's rate limit say nothing
// about it, and neither does "no matching server" (404, 409, an Agones
// allocator's unallocated answer): that is one armada set's shortage,
// which must not close the region to the others. Nor does a region not
// asked at all (skipped, or no token to ask with), nor a refusal of
// credentials (a TLS handshake refused: the deployment's problem).
func regionFault(a attempt) bool {
	switch a.Status {
	case 400, 401, 403, 404, 409, 429:
		return false
	}
	if a.kind == UpstreamNoCapacity || a.kind == UpstreamRefused || a.kind == UpstreamContention {
		return false
	}
	return a.outcome == outcomeCapacity || a.outcome == outcomeTimeout || a.outcome == outcomeFailed
}

// tryRegion asks up for one region until deadline: one call, then, as
// again decides, a retry after a fresh token, a 429's wait or a short
// pause after contention. It returns the allocation (no Server on
// failure) and the attempts made.
func (s *Service) tryRegion(ctx context.Context, deadline time.Time, up Upstream, creds *credentials, region string, spec Spec, payload Payload, redact func(string) string) (Allocated, []attempt) {
	req := UpstreamRequest{Region: up.Region, Environment: spec.Environment, ArmadaSet: spec.ArmadaSet, Payload: payload,
		Scheduling: spec.Scheduling, Dedicated: spec.Fingerprint.Dedicated}
	var attempts []attempt
	var r retries
	for {
		if wallUntil(deadline) < minAttempt {
			return Allocated{}, append(attempts, attempt{Attempt: gameinstance.Attempt{Region: region, AllocatorKind: up.Kind,
				Error: "not tried: the allocation's time budget is spent"}, outcome: outcomeSkipped})
		}
		got, a := s.call(ctx, deadline, up, creds.token[up.ID], region, req, redact)
		logging.FromContext(ctx).Info("allocation attempt", "gameInstanceId", spec.GameInstanceID, "region", region, "allocatorRegion", up.Region,
			"allocatorKind", up.Kind, "status", a.Status, "error", a.Error, "durationMs", a.DurationMs)
		attempts = append(attempts, a)
		if got.Server != nil || !s.again(ctx, deadline, up, creds, a, &r) {
			return got, attempts
		}
	}
}

// call makes one allocate call with token, bounded by the attempt timeout
// and deadline, and describes it as an attempt, scrubbed of credentials.
func (s *Service) call(ctx context.Context, deadline time.Time, up Upstream, token, region string, req UpstreamRequest, redact func(string) string) (Allocated, attempt) {
	actx, cancel := context.WithTimeout(ctx, min(s.o.AttemptTimeout, wallUntil(deadline)))
	defer cancel()
	start := wallNow()
	got, err := up.Allocator.Allocate(actx, token, req)
	a := attempt{Attempt: gameinstance.Attempt{Region: region, DurationMs: wallNow().Sub(start).Milliseconds(), Status: 200,
		AllocatorKind: up.Kind, GameServerName: got.GameServerName, NodeName: got.NodeName}, outcome: outcomeOK}
	if up.Region != region {
		a.AllocatorRegion = up.Region
	}
	if err != nil {
		// The token may have been refreshed since redact was built.
		a.failed(err, func(s string) string { return redactor(token)(redact(s)) })
		got = Allocated{}
	} else if got.Server == nil {
		a.failed(&UpstreamError{Kind: UpstreamDecode, Message: "the Allocator answered no server"}, redact)
	}
	return got, a
}

// retries is what one region has used of its second chances.
type retries struct {
	refreshed bool // the token was refreshed after a 401
	after429  int  // 429s retried
	contended int  // contention answers retried
}

// again decides whether to ask the region once more after the failed
// attempt a: once with a fresh token after a 401 (which replaces up's token
// in creds for the regions after), or after a 429's wait within the retry
// policy and the deadline.
func (s *Service) again(ctx context.Context, deadline time.Time, up Upstream, creds *credentials, a attempt, r *retries) bool {
	switch {
	case a.kind == UpstreamContention:
		wait, ok := s.o.Retry.waitContended(r.contended, wallUntil(deadline)-minAttempt)
		if !ok {
			return false
		}
		r.contended++
		return s.o.Sleep(ctx, wait) == nil
	case a.Status == 401 && a.kind == UpstreamStatus && !r.refreshed:
		r.refreshed = true
		fresh, err := up.Tokens.Refresh(ctx, creds.token[up.ID])
		if err != nil {
			logging.FromContext(ctx).Error("refreshing the allocator token failed", "region", a.Region, "error", err)
			return false
		}
		creds.token[up.ID] = fresh
		return true
	case a.outcome == outcomeRateLimited:
		wait, ok := s.o.Retry.wait429(r.after429, a.retryAfter, wallUntil(deadline)-minAttempt)
		if !ok {
			return false
		}
		r.after429++
		return s.o.Sleep(ctx, wait) == nil
	}
	return false
}

// failed fills a in from the call's error, scrubbed of credentials.
func (a *attempt) failed(err error, scrub func(string) string) {
	a.outcome, a.Status, a.Error, a.Body = classifyError(err), 0, scrub(err.Error()), ""
	a.SuspectedOrphan = true // an error we cannot read proves nothing was allocated
	var up *UpstreamError
	if errors.As(err, &up) {
		a.Status, a.Body, a.retryAfter, a.kind = up.Status, scrub(up.Body), up.RetryAfter, up.Kind
		a.SuspectedOrphan = up.MayHaveAllocated
	}
	a.RateLimited = a.outcome == outcomeRateLimited
}
