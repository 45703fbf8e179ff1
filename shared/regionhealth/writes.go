package regionhealth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// created is the part of a SET that gives a new item its first state; on an
// existing item it changes nothing.
const created = "#firstSeen = if_not_exists(#firstSeen, :now), #state = if_not_exists(#state, :initialized), #since = if_not_exists(#since, :since)"

// RecordSuccess makes the region Deployed with no failures and closes the
// breaker. Since moves only when the state changes, so it takes two
// conditional writes: one for "already Deployed", one for "anything else".
// They retry while other writers keep flipping the state between them.
func (s *DynamoStore) RecordSuccess(ctx context.Context, region string, now time.Time) error {
	const clear = " REMOVE #openUntil, #probeUntil, #reason"
	for range 5 {
		_, ok, err := s.apply(ctx, region, write{
			update: "SET #failures = :zero, #lastSuccess = :now, #firstSeen = if_not_exists(#firstSeen, :now)" + clear,
			cond:   "#state = :deployed",
			values: map[string]types.AttributeValue{":zero": number(0), ":now": millis(now), ":deployed": str(string(RegionDeployed))},
		})
		if err != nil || ok {
			return wrap("record success", region, err)
		}
		_, ok, err = s.apply(ctx, region, write{
			update: "SET #state = :deployed, #since = :since, #failures = :zero, #lastSuccess = :now, #firstSeen = if_not_exists(#firstSeen, :now)" + clear,
			cond:   "attribute_not_exists(#state) OR #state <> :deployed",
			values: map[string]types.AttributeValue{":deployed": str(string(RegionDeployed)), ":since": rfc3339(now),
				":zero": number(0), ":now": millis(now)},
		})
		if err != nil || ok {
			return wrap("record success", region, err)
		}
	}
	return fmt.Errorf("record success %s: the state kept changing under concurrent writes", region)
}

// RecordFailure counts one failure with an atomic ADD, then, from the new
// count, opens the breaker at the threshold or re-opens it after a failed
// probe. Both follow-ups are conditional, so of many concurrent failures
// exactly one opens it (one Since, one OpenUntil).
func (s *DynamoStore) RecordFailure(ctx context.Context, region, reason string, now time.Time) (Health, error) {
	if reason == "" {
		reason = BecauseAllocationFailures
	}
	h, _, err := s.apply(ctx, region, write{
		update: "ADD #failures :one SET " + created,
		values: map[string]types.AttributeValue{":one": number(1), ":now": millis(now),
			":initialized": str(string(RegionInitialized)), ":since": rfc3339(now)},
	})
	if err != nil {
		return Health{}, wrap("record failure", region, err)
	}
	openUntil := millis(now.Add(s.policy.Cooldown))
	switch {
	case h.State != RegionUnhealthy && h.ConsecutiveFailures >= s.policy.FailureThreshold:
		// The count is re-checked: a success between the ADD and here reset it.
		h, _, err = s.apply(ctx, region, write{
			update: "SET #state = :unhealthy, #since = :since, #openUntil = :openUntil, #reason = :reason REMOVE #probeUntil",
			cond:   "#state <> :unhealthy AND #failures >= :threshold",
			values: map[string]types.AttributeValue{":unhealthy": str(string(RegionUnhealthy)), ":since": rfc3339(now),
				":openUntil": openUntil, ":reason": str(reason), ":threshold": number(s.policy.FailureThreshold)},
		})
	case h.State == RegionUnhealthy && !now.Before(h.OpenUntil):
		// A failed probe: keep the reason the region became Unhealthy for,
		// skip it for another cooldown and free the probe.
		h, _, err = s.apply(ctx, region, write{
			update: "SET #openUntil = :openUntil REMOVE #probeUntil",
			cond:   "#state = :unhealthy AND (attribute_not_exists(#openUntil) OR #openUntil <= :now)",
			values: map[string]types.AttributeValue{":unhealthy": str(string(RegionUnhealthy)), ":openUntil": openUntil, ":now": millis(now)},
		})
	}
	if err != nil {
		return Health{}, wrap("record failure", region, err)
	}
	return h, nil
}

// ClaimProbe takes the half-open probe for ProbeLease. The condition is the
// Probe case of Decide, evaluated by DynamoDB, so of N callers that all
// decided Probe exactly one wins.
func (s *DynamoStore) ClaimProbe(ctx context.Context, region string, now time.Time) (bool, error) {
	_, ok, err := s.apply(ctx, region, write{
		update: "SET #probeUntil = :probeUntil",
		cond: "#state = :unhealthy AND (attribute_not_exists(#openUntil) OR #openUntil <= :now)" +
			" AND (attribute_not_exists(#probeUntil) OR #probeUntil <= :now)",
		values: map[string]types.AttributeValue{":probeUntil": millis(now.Add(s.policy.ProbeLease)),
			":unhealthy": str(string(RegionUnhealthy)), ":now": millis(now)},
	})
	if err != nil {
		return false, wrap("claim probe", region, err)
	}
	return ok, nil
}

// RecordPing applies one ping refresh. Errors for one region do not stop
// the others; they are returned together.
func (s *DynamoStore) RecordPing(ctx context.Context, regionsWithTargets, knownRegions []string, now time.Time) error {
	var errs []error
	for _, region := range dedupe(regionsWithTargets) {
		errs = append(errs, wrap("record ping", region, s.sawTargets(ctx, region, now)))
	}
	var silent []string
	for _, region := range dedupe(knownRegions) {
		if !slices.Contains(regionsWithTargets, region) {
			silent = append(silent, region)
		}
	}
	if len(silent) == 0 {
		return errors.Join(errs...)
	}
	current, err := s.Get(ctx, silent)
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("record ping: %w", err))...)
	}
	for _, region := range silent {
		errs = append(errs, wrap("record ping", region, s.sawNoTargets(ctx, current[region], now)))
	}
	return errors.Join(errs...)
}

// sawTargets: live ping targets make an Initialized region Deployed, and
// undo an Unhealthy that only missing targets caused. An Unhealthy from
// failures stays: the breaker and its probe decide about that one.
func (s *DynamoStore) sawTargets(ctx context.Context, region string, now time.Time) error {
	h, _, err := s.apply(ctx, region, write{
		update: "SET #lastPing = :now, " + created,
		values: map[string]types.AttributeValue{":now": millis(now), ":initialized": str(string(RegionInitialized)), ":since": rfc3339(now)},
	})
	if err != nil || !(h.State == RegionInitialized || h.State == RegionUnhealthy && h.Reason == BecauseNoPingTargets) {
		return err
	}
	_, _, err = s.apply(ctx, region, write{
		update: "SET #state = :deployed, #since = :since REMOVE #openUntil, #probeUntil, #reason",
		cond:   "#state = :initialized OR (#state = :unhealthy AND #reason = :noPing)",
		values: map[string]types.AttributeValue{":deployed": str(string(RegionDeployed)), ":since": rfc3339(now),
			":initialized": str(string(RegionInitialized)), ":unhealthy": str(string(RegionUnhealthy)), ":noPing": str(BecauseNoPingTargets)},
	})
	return err
}

// sawNoTargets starts the clock of a region never stored (firstSeenAt), and
// marks one silent for too long Unhealthy. The condition repeats noPingDue
// in DynamoDB, so a concurrent success or ping that lands first wins.
func (s *DynamoStore) sawNoTargets(ctx context.Context, h Health, now time.Time) error {
	if h.FirstSeenAt.IsZero() {
		_, _, err := s.apply(ctx, h.Region, write{
			update: "SET " + created,
			values: map[string]types.AttributeValue{":now": millis(now), ":initialized": str(string(RegionInitialized)), ":since": rfc3339(now)},
		})
		return err
	}
	if !s.policy.noPingDue(h, now) {
		return nil
	}
	_, _, err := s.apply(ctx, h.Region, write{
		update: "SET #state = :unhealthy, #since = :since, #openUntil = :openUntil, #reason = :noPing REMOVE #probeUntil",
		cond: "#state <> :unhealthy" +
			" AND ((attribute_exists(#lastPing) AND #lastPing < :cutoff) OR (attribute_not_exists(#lastPing) AND #firstSeen < :cutoff))" +
			" AND (attribute_not_exists(#lastSuccess) OR #lastSuccess < :cutoff)",
		values: map[string]types.AttributeValue{":unhealthy": str(string(RegionUnhealthy)), ":since": rfc3339(now),
			":openUntil": millis(now.Add(s.policy.Cooldown)), ":noPing": str(BecauseNoPingTargets),
			":cutoff": millis(now.Add(-s.policy.NoPingUnhealthyAfter))},
	})
	return err
}

func dedupe(regions []string) []string {
	out := slices.Clone(regions)
	slices.Sort(out)
	return slices.Compact(out)
}

// wrap adds the operation and region to err; nil stays nil.
func wrap(op, region string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s %s: %w", op, region, err)
}
