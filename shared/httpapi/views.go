package httpapi

import (
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// RecordView is the public shape of a record: no tokens, hashes or claims.
type RecordView struct {
	GameInstanceID string                 `json:"gameInstanceId"`
	State          gameinstance.State     `json:"state"`
	Region         string                 `json:"region,omitempty"`
	FallbackUsed   bool                   `json:"fallbackUsed"`
	LatencyRelaxed bool                   `json:"latencyFilterRelaxed,omitempty"`
	Server         *gameinstance.Server   `json:"server,omitempty"`
	Placement      gameinstance.Placement `json:"placement,omitempty"`
	Attempts       []AttemptView          `json:"attempts"`
	Error          *gameinstance.Failure  `json:"error,omitempty"`
	// QueuedUntil: the placement was queued, to be placed by then.
	QueuedUntil string `json:"queuedUntil,omitempty"`
	CreatedAt   string `json:"createdAt,omitempty"`
	UpdatedAt   string `json:"updatedAt,omitempty"`
	lifecycleView
}

// lifecycleView is what the game server reported and the health sweep found.
type lifecycleView struct {
	LinkedAt        string                 `json:"linkedAt,omitempty"`
	LinkedServer    *gameinstance.LinkInfo `json:"linkedServer,omitempty"`
	RecoveredByLink bool                   `json:"recoveredByLink,omitempty"`
	LastHeartbeatAt string                 `json:"lastHeartbeatAt,omitempty"`
	EndedAt         string                 `json:"endedAt,omitempty"`
	EndReason       string                 `json:"endReason,omitempty"`
	UnhealthyAt     string                 `json:"unhealthyAt,omitempty"`
	UnhealthyReason string                 `json:"unhealthyReason,omitempty"`
}

func lifecycleOf(r gameinstance.Record) lifecycleView {
	return lifecycleView{
		LinkedAt:        FormatTime(r.LinkedAt),
		LinkedServer:    r.LinkInfo,
		RecoveredByLink: r.RecoveredByLink,
		LastHeartbeatAt: FormatTime(r.LastHeartbeatAt),
		EndedAt:         FormatTime(r.EndedAt),
		EndReason:       r.EndReason,
		UnhealthyAt:     FormatTime(r.UnhealthyAt),
		UnhealthyReason: r.UnhealthyReason,
	}
}

// AttemptView is one step of the decision trace as the API answers it:
// no upstream body, which may quote GameFabric's answers.
type AttemptView struct {
	Region          string `json:"region"`
	Reason          string `json:"reason,omitempty"`
	Status          int    `json:"status"`
	Error           string `json:"error,omitempty"`
	DurationMs      int64  `json:"durationMs"`
	SuspectedOrphan bool   `json:"suspectedOrphan,omitempty"`
	RateLimited     bool   `json:"rateLimited,omitempty"`
	AllocatorRegion string `json:"allocatorRegion,omitempty"`
	// Placement and Server: a session callback to a game server with a
	// free room (room attempts only).
	Placement gameinstance.Placement `json:"placement,omitempty"`
	Server    string                 `json:"server,omitempty"`
	// MaxPlayerLatencyMs: the latency cap in force for the attempt.
	MaxPlayerLatencyMs float64 `json:"maxPlayerLatencyMs,omitempty"`
}

// ViewOf is r as the API answers it.
func ViewOf(r gameinstance.Record) RecordView {
	v := RecordView{
		GameInstanceID: r.GameInstanceID,
		State:          r.State,
		Region:         r.Region,
		FallbackUsed:   r.FallbackUsed,
		LatencyRelaxed: r.LatencyRelaxed,
		Server:         r.Server.Public(),
		Placement:      r.PlacedBy(),
		Attempts:       AttemptsOf(r),
		Error:          r.Failure,
		CreatedAt:      FormatTime(r.CreatedAt),
		UpdatedAt:      FormatTime(r.UpdatedAt),
		lifecycleView:  lifecycleOf(r),
	}
	if r.Queue != nil {
		v.QueuedUntil = FormatTime(r.Queue.Until)
	}
	return v
}

// AttemptsOf is r's decision trace as the API answers it (never nil).
func AttemptsOf(r gameinstance.Record) []AttemptView {
	out := make([]AttemptView, 0, len(r.Attempts))
	for _, a := range r.Attempts {
		out = append(out, AttemptView{Region: a.Region, Reason: a.Reason, Status: a.Status, Error: a.Error,
			DurationMs: a.DurationMs, SuspectedOrphan: a.SuspectedOrphan, RateLimited: a.RateLimited, AllocatorRegion: a.AllocatorRegion,
			Placement: a.Placement, Server: a.Server, MaxPlayerLatencyMs: a.MaxPlayerLatencyMs})
	}
	return out
}

// FormatTime is how the API writes times: RFC 3339, UTC, "" for none.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
