package allocation

import (
	"context"
	"errors"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// admit asks the breaker about the plan's regions. When it would skip
// every one, all are tried anyway: failing without trying helps nobody.
func (s *Service) admit(ctx context.Context, plan []PlanStep) []Verdict {
	verdicts := make([]Verdict, len(plan))
	for i := range verdicts {
		verdicts[i].Try = true
	}
	if s.o.Health == nil {
		return verdicts
	}
	regions := make([]string, len(plan))
	for i, step := range plan {
		regions[i] = step.Region
	}
	got := s.o.Health.Admit(ctx, regions)
	if len(got) != len(plan) {
		return verdicts
	}
	for _, v := range got {
		if v.Try {
			return got
		}
	}
	for i := range verdicts {
		verdicts[i].Reason = "unhealthy, tried anyway: every candidate region is unhealthy"
	}
	return verdicts
}

// regionFault: the attempt says something about the region's health. Auth,
// bad requests and the allocator-wide rate limit say nothing about it.
func regionFault(a Attempt) bool {
	switch a.Status {
	case 400, 401, 403, 429:
		return false
	}
	return a.outcome == outcomeCapacity || a.outcome == outcomeTimeout || a.outcome == outcomeFailed
}

// deadline bounds all upstream work: inside the lease, and inside the
// Lambda deadline with time kept back to record the outcome.
func (s *Service) deadline(ctx context.Context) time.Time {
	margin := min(leaseMargin, s.o.Lease/4)
	deadline := time.Now().Add(s.o.Lease - margin)
	if d, ok := ctx.Deadline(); ok && d.Add(-finishReserve).Before(deadline) {
		deadline = d.Add(-finishReserve)
	}
	return deadline
}

// tryRegion asks one region, refreshing the token once on 401 and retrying
// 429s within the retry policy. It returns the allocation (nil on failure),
// the attempts made and the token now in use.
func (s *Service) tryRegion(ctx context.Context, deadline time.Time, token, region string, spec Spec, payload Payload, redact func(string) string) (*gamefabric.Allocation, []Attempt, string) {
	log := logging.FromContext(ctx)
	req := gamefabric.AllocateRequest{
		Region:     region,
		Attributes: map[string]string{"env": spec.Environment, "armadaset": spec.ArmadaSet},
		Payload:    payload,
	}
	var attempts []Attempt
	refreshed := false
	for retries429 := 0; ; {
		remaining := time.Until(deadline)
		if remaining < minAttempt {
			return nil, append(attempts, Attempt{Region: region, Error: "not tried: no time left before the deadline", outcome: outcomeSkipped}), token
		}
		actx, cancel := context.WithTimeout(ctx, min(s.o.AttemptTimeout, remaining))
		start := time.Now()
		alloc, err := s.o.Allocator.Allocate(actx, token, req)
		cancel()
		a := Attempt{Region: region, DurationMs: time.Since(start).Milliseconds(), outcome: outcomeOK, Status: 200}
		if err != nil {
			// The token may have been refreshed since redact was built.
			scrub := func(s string) string { return redactor(token)(redact(s)) }
			a.outcome, a.Status, a.Error, a.Body = classifyError(err), 0, scrub(err.Error()), ""
			var gf *gamefabric.Error
			if errors.As(err, &gf) {
				a.Status, a.Body = gf.Status, scrub(gf.Body)
			}
		}
		attempts = append(attempts, a)
		log.Info("allocation attempt", "gameInstanceId", spec.GameInstanceID, "region", region,
			"status", a.Status, "error", a.Error, "durationMs", a.DurationMs)
		if err == nil {
			return alloc, attempts, token
		}

		var gf *gamefabric.Error
		errors.As(err, &gf)
		switch {
		case gf != nil && gf.Status == 401 && !refreshed:
			refreshed = true
			fresh, terr := s.o.Tokens.Refresh(ctx, token)
			if terr != nil {
				log.Error("refreshing the allocator token failed", "error", terr)
				return nil, attempts, token
			}
			token = fresh
		case gf != nil && gf.Status == 429:
			wait, ok := s.o.Retry.wait429(retries429, gf.RetryAfter, time.Until(deadline)-minAttempt)
			if !ok {
				return nil, attempts, token
			}
			retries429++
			if s.o.Sleep(ctx, wait) != nil {
				return nil, attempts, token
			}
		default:
			return nil, attempts, token
		}
	}
}
