package httpapi

import (
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// ViewOf is r as the allocation routes answer it: the public shape, with
// no tokens, hashes, claims or upstream bodies.
func ViewOf(r gameinstance.Record) apishape.Allocation {
	v := apishape.Allocation{
		GameInstanceID:       r.GameInstanceID,
		State:                r.State,
		Region:               r.Region,
		FallbackUsed:         r.FallbackUsed,
		LatencyFilterRelaxed: r.LatencyRelaxed,
		Server:               r.Server.Public(),
		Placement:            r.PlacedBy(),
		Attempts:             AttemptsOf(r),
		Error:                r.Failure,
		CreatedAt:            utc(r.CreatedAt),
		UpdatedAt:            utc(r.UpdatedAt),
		Lifecycle:            lifecycleOf(r),
	}
	if r.Queue != nil {
		v.QueuedUntil = utc(r.Queue.Until)
	}
	return v
}

// lifecycleOf is what the game server reported and the health sweep found,
// as both the allocation routes and the game-server routes answer it.
func lifecycleOf(r gameinstance.Record) apishape.Lifecycle {
	return apishape.Lifecycle{
		LinkedAt:        utc(r.LinkedAt),
		LinkedServer:    r.LinkInfo,
		RecoveredByLink: r.RecoveredByLink,
		LastHeartbeatAt: utc(r.LastHeartbeatAt),
		EndedAt:         utc(r.EndedAt),
		EndReason:       r.EndReason,
		UnhealthyAt:     utc(r.UnhealthyAt),
		UnhealthyReason: r.UnhealthyReason,
	}
}

// AttemptsOf is r's decision trace as the API answers it (never nil):
// without the upstream bodies, which may quote GameFabric's answers (only
// a failed allocation's error answer carries them).
func AttemptsOf(r gameinstance.Record) []apishape.Attempt {
	out := make([]apishape.Attempt, 0, len(r.Attempts))
	for _, a := range r.Attempts {
		a.Body = ""
		out = append(out, a)
	}
	return out
}

// utc is t as answers write it: encoding/json writes a time.Time in RFC
// 3339 with nanoseconds in its location, so the API's times are in UTC.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// FormatTime is how the API writes a time it answers as a string: RFC
// 3339, UTC, "" for none (the same text utc's time.Time encodes to).
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
