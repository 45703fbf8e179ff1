package regiontable

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
)

// regionCreated is the part of a SET that gives a new item its first state; on an
// existing item it changes nothing.
const regionCreated = "#firstSeen = if_not_exists(#firstSeen, :now), #state = if_not_exists(#state, :initialized), #since = if_not_exists(#since, :since)"

// RecordSuccess makes the region Deployed with no failures and closes the
// breaker. Since moves only when the state changes, so it takes two
// conditional writes: one for "already Deployed", one for "anything else".
// They retry while other writers keep flipping the state between them.
func (s *Table) RecordSuccess(ctx context.Context, region string, now time.Time) error {
	const clear = " REMOVE #openUntil, #probeUntil, #reason"
	for range 5 {
		_, ok, err := s.apply(ctx, region, regionWrite{
			update: "SET #failures = :zero, #lastSuccess = :now, #firstSeen = if_not_exists(#firstSeen, :now)" + clear,
			cond:   "#state = :deployed",
			values: map[string]types.AttributeValue{":zero": number(0), ":now": millis(now), ":deployed": str(string(regionhealth.RegionDeployed))},
		})
		if err != nil || ok {
			return wrapRegion("record success", region, err)
		}
		_, ok, err = s.apply(ctx, region, regionWrite{
			update: "SET #state = :deployed, #since = :since, #failures = :zero, #lastSuccess = :now, #firstSeen = if_not_exists(#firstSeen, :now)" + clear,
			cond:   "attribute_not_exists(#state) OR #state <> :deployed",
			values: map[string]types.AttributeValue{":deployed": str(string(regionhealth.RegionDeployed)), ":since": rfc3339(now),
				":zero": number(0), ":now": millis(now)},
		})
		if err != nil || ok {
			return wrapRegion("record success", region, err)
		}
	}
	return fmt.Errorf("record success %s: the state kept changing under concurrent writes", region)
}

// RecordFailure counts one failure with an atomic ADD, then, from the new
// count, opens the breaker at the threshold or re-opens it after a failed
// probe. Both follow-ups are conditional, so of many concurrent failures
// exactly one opens it (one Since, one OpenUntil).
func (s *Table) RecordFailure(ctx context.Context, region, reason string, now time.Time) (regionhealth.Health, error) {
	if reason == "" {
		reason = regionhealth.BecauseAllocationFailures
	}
	h, _, err := s.apply(ctx, region, regionWrite{
		update: "ADD #failures :one SET " + regionCreated,
		values: map[string]types.AttributeValue{":one": number(1), ":now": millis(now),
			":initialized": str(string(regionhealth.RegionInitialized)), ":since": rfc3339(now)},
	})
	if err != nil {
		return regionhealth.Health{}, wrapRegion("record failure", region, err)
	}
	openUntil := millis(now.Add(s.policy.Cooldown))
	switch {
	case h.State != regionhealth.RegionUnhealthy && h.ConsecutiveFailures >= s.policy.FailureThreshold:
		// The count is re-checked: a success between the ADD and here reset it.
		h, _, err = s.apply(ctx, region, regionWrite{
			update: "SET #state = :unhealthy, #since = :since, #openUntil = :openUntil, #reason = :reason REMOVE #probeUntil",
			cond:   "#state <> :unhealthy AND #failures >= :threshold",
			values: map[string]types.AttributeValue{":unhealthy": str(string(regionhealth.RegionUnhealthy)), ":since": rfc3339(now),
				":openUntil": openUntil, ":reason": str(reason), ":threshold": number(s.policy.FailureThreshold)},
		})
	case h.State == regionhealth.RegionUnhealthy && !now.Before(h.OpenUntil):
		// A failed probe: keep the reason the region became Unhealthy for,
		// skip it for another cooldown and free the probe.
		h, _, err = s.apply(ctx, region, regionWrite{
			update: "SET #openUntil = :openUntil REMOVE #probeUntil",
			cond:   "#state = :unhealthy AND (attribute_not_exists(#openUntil) OR #openUntil <= :now)",
			values: map[string]types.AttributeValue{":unhealthy": str(string(regionhealth.RegionUnhealthy)), ":openUntil": openUntil, ":now": millis(now)},
		})
	}
	if err != nil {
		return regionhealth.Health{}, wrapRegion("record failure", region, err)
	}
	return h, nil
}

// ClaimProbe takes the half-open probe for ProbeLease. The condition is the
// Probe case of Decide, evaluated by DynamoDB, so of N callers that all
// decided Probe exactly one wins.
func (s *Table) ClaimProbe(ctx context.Context, region string, now time.Time) (bool, error) {
	_, ok, err := s.apply(ctx, region, regionWrite{
		update: "SET #probeUntil = :probeUntil",
		cond: "#state = :unhealthy AND (attribute_not_exists(#openUntil) OR #openUntil <= :now)" +
			" AND (attribute_not_exists(#probeUntil) OR #probeUntil <= :now)",
		values: map[string]types.AttributeValue{":probeUntil": millis(now.Add(s.policy.ProbeLease)),
			":unhealthy": str(string(regionhealth.RegionUnhealthy)), ":now": millis(now)},
	})
	if err != nil {
		return false, wrapRegion("claim probe", region, err)
	}
	return ok, nil
}

// RecordPing applies one ping refresh. Errors for one region do not stop
// the others; they are returned together.
func (s *Table) RecordPing(ctx context.Context, regionsWithTargets, knownRegions []string, now time.Time) error {
	var errs []error
	for _, region := range dedupeRegions(regionsWithTargets) {
		errs = append(errs, wrapRegion("record ping", region, s.sawTargets(ctx, region, now)))
	}
	var silent []string
	for _, region := range dedupeRegions(knownRegions) {
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
		errs = append(errs, wrapRegion("record ping", region, s.sawNoTargets(ctx, current[region], now)))
	}
	return errors.Join(errs...)
}

// sawTargets: live ping targets make an Initialized region Deployed, and
// undo an Unhealthy that only missing targets caused. An Unhealthy from
// failures stays: the breaker and its probe decide about that one.
func (s *Table) sawTargets(ctx context.Context, region string, now time.Time) error {
	h, _, err := s.apply(ctx, region, regionWrite{
		update: "SET #lastPing = :now, " + regionCreated,
		values: map[string]types.AttributeValue{":now": millis(now), ":initialized": str(string(regionhealth.RegionInitialized)), ":since": rfc3339(now)},
	})
	if err != nil || !(h.State == regionhealth.RegionInitialized || h.State == regionhealth.RegionUnhealthy && h.Reason == regionhealth.BecauseNoPingTargets) {
		return err
	}
	_, _, err = s.apply(ctx, region, regionWrite{
		update: "SET #state = :deployed, #since = :since REMOVE #openUntil, #probeUntil, #reason",
		cond:   "#state = :initialized OR (#state = :unhealthy AND #reason = :noPing)",
		values: map[string]types.AttributeValue{":deployed": str(string(regionhealth.RegionDeployed)), ":since": rfc3339(now),
			":initialized": str(string(regionhealth.RegionInitialized)), ":unhealthy": str(string(regionhealth.RegionUnhealthy)), ":noPing": str(regionhealth.BecauseNoPingTargets)},
	})
	return err
}

// sawNoTargets starts the clock of a region never stored (firstSeenAt), and
// marks one silent for too long Unhealthy. The condition repeats noPingDue
// in DynamoDB, so a concurrent success or ping that lands first wins.
func (s *Table) sawNoTargets(ctx context.Context, h regionhealth.Health, now time.Time) error {
	if h.FirstSeenAt.IsZero() {
		_, _, err := s.apply(ctx, h.Region, regionWrite{
			update: "SET " + regionCreated,
			values: map[string]types.AttributeValue{":now": millis(now), ":initialized": str(string(regionhealth.RegionInitialized)), ":since": rfc3339(now)},
		})
		return err
	}
	if !s.policy.NoPingDue(h, now) {
		return nil
	}
	_, _, err := s.apply(ctx, h.Region, regionWrite{
		update: "SET #state = :unhealthy, #since = :since, #openUntil = :openUntil, #reason = :noPing REMOVE #probeUntil",
		cond: "#state <> :unhealthy" +
			" AND ((attribute_exists(#lastPing) AND #lastPing < :cutoff) OR (attribute_not_exists(#lastPing) AND #firstSeen < :cutoff))" +
			" AND (attribute_not_exists(#lastSuccess) OR #lastSuccess < :cutoff)",
		values: map[string]types.AttributeValue{":unhealthy": str(string(regionhealth.RegionUnhealthy)), ":since": rfc3339(now),
			":openUntil": millis(now.Add(s.policy.Cooldown)), ":noPing": str(regionhealth.BecauseNoPingTargets),
			":cutoff": millis(now.Add(-s.policy.NoPingUnhealthyAfter))},
	})
	return err
}

func dedupeRegions(regions []string) []string {
	out := slices.Clone(regions)
	slices.Sort(out)
	return slices.Compact(out)
}

// wrapRegion adds the operation and region to err; nil stays nil.
func wrapRegion(op, region string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s %s: %w", op, region, err)
}
