package allocation

import (
	"context"
	"errors"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// planRun is what trying the plan's regions produced.
type planRun struct {
	attempts []attempt
	// alloc is the allocation, made in region by plan step step with
	// partnerToken; nil when every attempt failed.
	alloc        *gamefabric.Allocation
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
}

type observation struct {
	region string
	ok     bool
}

// runPlan tries the plan's regions in order until one allocates, within
// ctx (which ends at the budget's upstream deadline).
func (s *Service) runPlan(ctx context.Context, b budget, spec Spec, creds *credentials, partnerTokens []string) planRun {
	log := logging.FromContext(ctx)
	// FALLBACK_REGION is configured, so known from the start.
	run := planRun{known: map[string]bool{}}
	if s.o.Defaults.Region != "" {
		run.known[s.o.Defaults.Region] = true
	}
	payload := Payload{
		GameInstanceID:       spec.GameInstanceID,
		PartnerSocialToken:   spec.PartnerSocialToken,
		PragmaBackendAddress: s.o.BackendAddress,
		ServerArgs:           spec.Fingerprint.ServerArgs,
	}
	redact := redactor(append(append(creds.all(), spec.PartnerSocialToken), partnerTokens...)...)
	// limitedBy: an Allocator that rate-limited this allocation, and the
	// region where it did. Its other regions share the limit, so asking
	// them now would only be answered 429 again.
	limitedBy := map[string]string{}
	verdicts := s.admit(ctx, spec.Plan)
	for i, step := range spec.Plan {
		v, up := verdicts[i], creds.upstreams[i]
		if v.Known {
			run.known[step.Region] = true
		}
		if skip, ok := notAsked(step, v, creds.err[up.ID], limitedBy[up.ID]); ok {
			if skip.outcome == outcomeSkipped {
				run.skipped++
			}
			run.attempts = append(run.attempts, skip)
			continue
		} else if v.Reason != "" {
			step.Reason += "; " + v.Reason
		}
		payload.PartnerGameToken = partnerTokens[i]
		alloc, tried := s.tryRegion(ctx, b.upstream, up, creds, step.Region, spec, payload, redact)
		for j := range tried {
			tried[j].Reason = step.Reason
			if tried[j].SuspectedOrphan {
				run.orphans = append(run.orphans, step.Region)
				log.Warn("suspected orphan: GameFabric may have allocated a server this attempt never heard of",
					"gameInstanceId", spec.GameInstanceID, "region", step.Region, "status", tried[j].Status, "error", tried[j].Error)
			}
		}
		run.attempts = append(run.attempts, tried...)
		if alloc != nil {
			run.observed = append(run.observed, observation{step.Region, true})
			run.alloc, run.region, run.step, run.partnerToken = alloc, step.Region, i, partnerTokens[i]
			run.known[step.Region] = true
			return run
		}
		last := tried[len(tried)-1]
		if last.outcome == outcomeRateLimited {
			limitedBy[up.ID] = step.Region
		}
		// Only a known region's failures count: a name a caller invents
		// must not create region-health records.
		if regionFault(last) && run.known[step.Region] {
			run.observed = append(run.observed, observation{step.Region, false})
		}
	}
	return run
}

// notAsked is the attempt recording why a plan step is not tried, and
// whether it is not: the breaker skips its region, its Allocator already
// rate-limited this allocation (in region limitedIn), or its Allocator's
// token could not be read (tokenErr).
func notAsked(step PlanStep, v Verdict, tokenErr error, limitedIn string) (attempt, bool) {
	a := attempt{Attempt: gameinstance.Attempt{Region: step.Region, Reason: step.Reason}}
	switch {
	case !v.Try:
		a.Reason, a.outcome = step.Reason+"; skipped: "+v.Reason, outcomeSkipped
	case limitedIn != "":
		a.Error = "not tried: the Allocator serving it rate-limited this allocation (429 in " + limitedIn + ")"
		a.RateLimited, a.outcome = true, outcomeRateLimitSkipped
	case tokenErr != nil:
		a.Error = gamefabric.Clip("not tried: the Allocator's token could not be read: "+tokenErr.Error(), gamefabric.MaxErrorText)
		a.outcome = outcomeNoToken
	default:
		return attempt{}, false
	}
	return a, true
}

// admit asks the breaker about the plan's regions, within healthTimeout.
// When it would skip every one, all are tried anyway: failing without
// trying helps nobody.
func (s *Service) admit(ctx context.Context, plan []PlanStep) []Verdict {
	verdicts := make([]Verdict, len(plan))
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
// about it, and neither does "no matching server" (404, 409): that is one
// armada set's shortage, which must not close the region to the others.
// Nor does a region not asked at all (skipped, or no token to ask with).
func regionFault(a attempt) bool {
	switch a.Status {
	case 400, 401, 403, 404, 409, 429:
		return false
	}
	return a.outcome == outcomeCapacity || a.outcome == outcomeTimeout || a.outcome == outcomeFailed
}

// tryRegion asks up for one region until deadline: one call, then, as
// again decides, a retry after a fresh token or a 429's wait. It returns
// the allocation (nil on failure) and the attempts made.
func (s *Service) tryRegion(ctx context.Context, deadline time.Time, up Upstream, creds *credentials, region string, spec Spec, payload Payload, redact func(string) string) (*gamefabric.Allocation, []attempt) {
	req := gamefabric.AllocateRequest{
		Region:     up.Region,
		Attributes: map[string]string{"env": spec.Environment, "armadaset": spec.ArmadaSet},
		Payload:    payload,
	}
	var attempts []attempt
	var r retries
	for {
		if wallUntil(deadline) < minAttempt {
			return nil, append(attempts, attempt{Attempt: gameinstance.Attempt{Region: region, Error: "not tried: the allocation's time budget is spent"}, outcome: outcomeSkipped})
		}
		alloc, a := s.call(ctx, deadline, up, creds.token[up.ID], region, req, redact)
		logging.FromContext(ctx).Info("allocation attempt", "gameInstanceId", spec.GameInstanceID, "region", region, "allocatorRegion", up.Region,
			"status", a.Status, "error", a.Error, "durationMs", a.DurationMs)
		attempts = append(attempts, a)
		if alloc != nil || !s.again(ctx, deadline, up, creds, a, &r) {
			return alloc, attempts
		}
	}
}

// call makes one allocate call with token, bounded by the attempt timeout
// and deadline, and describes it as an attempt, scrubbed of credentials.
func (s *Service) call(ctx context.Context, deadline time.Time, up Upstream, token, region string, req gamefabric.AllocateRequest, redact func(string) string) (*gamefabric.Allocation, attempt) {
	actx, cancel := context.WithTimeout(ctx, min(s.o.AttemptTimeout, wallUntil(deadline)))
	defer cancel()
	start := wallNow()
	alloc, err := up.Allocator.Allocate(actx, token, req)
	a := attempt{Attempt: gameinstance.Attempt{Region: region, DurationMs: wallNow().Sub(start).Milliseconds(), Status: 200}, outcome: outcomeOK}
	if up.Region != region {
		a.AllocatorRegion = up.Region
	}
	if err != nil {
		// The token may have been refreshed since redact was built.
		a.failed(err, func(s string) string { return redactor(token)(redact(s)) })
	}
	return alloc, a
}

// retries is what one region has used of its second chances.
type retries struct {
	refreshed bool // the token was refreshed after a 401
	after429  int  // 429s retried
}

// again decides whether to ask the region once more after the failed
// attempt a: once with a fresh token after a 401 (which replaces up's token
// in creds for the regions after), or after a 429's wait within the retry
// policy and the deadline.
func (s *Service) again(ctx context.Context, deadline time.Time, up Upstream, creds *credentials, a attempt, r *retries) bool {
	switch {
	case a.Status == 401 && !r.refreshed:
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
	var gf *gamefabric.Error
	if errors.As(err, &gf) {
		a.Status, a.Body, a.retryAfter = gf.Status, scrub(gf.Body), gf.RetryAfter
		a.SuspectedOrphan = gf.MayHaveAllocated()
	}
	a.RateLimited = a.outcome == outcomeRateLimited
}
