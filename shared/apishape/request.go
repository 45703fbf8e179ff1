package apishape

import (
	"fmt"
	"log/slog"
)

// AllocateRequest is the body of POST /v1/allocations, as allocclient
// sends it and shared/allocation decodes it. GameInstanceID is the
// idempotency key: a retry with the same one never allocates twice. Empty
// fields are left out, which the service reads as "not given".
type AllocateRequest struct {
	GameInstanceID string `json:"gameInstanceId"`
	// DesiredRegion is shorthand for PreferredRegions of one; give one or the other.
	DesiredRegion     string `json:"desiredRegion,omitempty"`
	GameServerVersion string `json:"gameServerVersion,omitempty"` // "<environment>::<armadaSet>"
	ServerArgs        string `json:"serverArgs,omitempty"`
	// PartnerGameToken is the game server's link-back credential; empty
	// has one minted per region attempted (the safer choice).
	PartnerGameToken   string   `json:"partnerGameToken,omitempty"`
	PartnerSocialToken string   `json:"partnerSocialToken,omitempty"`
	PreferredRegions   []string `json:"preferredRegions,omitempty"`
	// PlayerLatencies rank the regions when none is requested.
	PlayerLatencies    []PlayerLatency `json:"playerLatencies,omitempty"`
	MaxPlayerLatencyMs *float64        `json:"maxPlayerLatencyMs,omitempty"`
	// Scheduling orders the game servers with a free room: "Packed" (the
	// default, fewest free rooms first) or "Distributed" (most first).
	Scheduling string `json:"scheduling,omitempty"`
	// Dedicated asks for a whole game server, never a room on a shared one.
	Dedicated bool `json:"dedicated,omitempty"`
	// QueueTimeoutSeconds (0–600) lets a placement that found no capacity
	// wait for it: the answer is then 202 and Queued. nil takes the
	// deployment's QUEUE_TIMEOUT; 0 fails fast.
	QueueTimeoutSeconds *int `json:"queueTimeoutSeconds,omitempty"`
	// LatencyPolicies relax the players' latency cap over a queued
	// placement's life (GameLift's PlayerLatencyPolicies); they need
	// PlayerLatencies and exclude MaxPlayerLatencyMs.
	LatencyPolicies []LatencyPolicy `json:"latencyPolicies,omitempty"`
}

// LatencyPolicy is one step of AllocateRequest.LatencyPolicies: no player
// above MaxPlayerLatencyMs in a region asked, for DurationSeconds from the
// previous step's end. Only the last step may leave DurationSeconds nil
// (the cap then holds until the queue timeout); caps must increase.
type LatencyPolicy struct {
	MaxPlayerLatencyMs float64 `json:"maxPlayerLatencyMs"`
	DurationSeconds    *int    `json:"durationSeconds,omitempty"`
}

// PlayerLatency is one player's measured latency per region, from pinging
// the targets GET /v1/regions lists.
type PlayerLatency struct {
	PlayerID  string             `json:"playerId,omitempty"`
	LatencyMs map[string]float64 `json:"latencyMs"`
}

// String keeps the tokens out of anything that prints a request with %v.
func (r AllocateRequest) String() string {
	return fmt.Sprintf("{gameInstanceId:%s desiredRegion:%s gameServerVersion:%s preferredRegions:%v players:%d partnerGameToken:%s partnerSocialToken:%s}",
		r.GameInstanceID, r.DesiredRegion, r.GameServerVersion, r.PreferredRegions, len(r.PlayerLatencies),
		redacted(r.PartnerGameToken), redacted(r.PartnerSocialToken))
}

// LogValue keeps the tokens out of slog lines.
func (r AllocateRequest) LogValue() slog.Value {
	return slog.GroupValue(slog.String("gameInstanceId", r.GameInstanceID), slog.String("desiredRegion", r.DesiredRegion),
		slog.String("gameServerVersion", r.GameServerVersion), slog.Any("preferredRegions", r.PreferredRegions),
		slog.Int("players", len(r.PlayerLatencies)), slog.String("partnerGameToken", redacted(r.PartnerGameToken)),
		slog.String("partnerSocialToken", redacted(r.PartnerSocialToken)))
}

func redacted(token string) string {
	if token == "" {
		return ""
	}
	return "[redacted]"
}
