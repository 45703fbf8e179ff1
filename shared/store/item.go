// Package store keeps game instance records in DynamoDB.
package store

import (
	"fmt"
	"hash/fnv"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// item is a record's DynamoDB shape. Times that conditions compare are
// numbers (lease in ms, TTL in seconds as DynamoDB's TTL requires); times
// people read are RFC 3339.
type item struct {
	GameInstanceID    string      `dynamodbav:"gameInstanceId"`
	State             string      `dynamodbav:"state"`
	DesiredRegion     string      `dynamodbav:"desiredRegion"`
	GameServerVersion string      `dynamodbav:"gameServerVersion"`
	ServerArgs        string      `dynamodbav:"serverArgs"`
	RegionInputs      string      `dynamodbav:"regionInputs,omitempty"`
	LatencyRelaxed    bool        `dynamodbav:"latencyRelaxed,omitempty"`
	Environment       string      `dynamodbav:"environment"`
	ArmadaSet         string      `dynamodbav:"armadaSet"`
	Region            string      `dynamodbav:"region,omitempty"`
	FallbackUsed      bool        `dynamodbav:"fallbackUsed"`
	Server            *serverItem `dynamodbav:"server,omitempty"`
	Placement         string      `dynamodbav:"placement,omitempty"`
	RoomServer        string      `dynamodbav:"roomServer,omitempty"`
	Scheduling        string      `dynamodbav:"scheduling,omitempty"`
	Dedicated         bool        `dynamodbav:"dedicated,omitempty"`
	// FromMatch: a FlexMatch match's instance (MatchesTable keeps the
	// rest); its Failed record is final.
	FromMatch bool `dynamodbav:"fromMatch,omitempty"`
	// GameLift: a GameLift placement's input digest (its kept placement
	// has the rest); its Failed record is final too.
	GameLift             string        `dynamodbav:"gameLift,omitempty"`
	Attempts             []attemptItem `dynamodbav:"attempts,omitempty"`
	FailureCode          string        `dynamodbav:"failureCode,omitempty"`
	FailureMessage       string        `dynamodbav:"failureMessage,omitempty"`
	PartnerGameTokenHash string        `dynamodbav:"partnerGameTokenHash"`
	CandidateTokenHashes []string      `dynamodbav:"candidateTokenHashes,omitempty"`
	ClaimID              string        `dynamodbav:"claimId"`
	LeaseExpiresAt       int64         `dynamodbav:"leaseExpiresAt"`
	CreatedAt            string        `dynamodbav:"createdAt"`
	UpdatedAt            string        `dynamodbav:"updatedAt"`
	ExpiresAt            int64         `dynamodbav:"expiresAt,omitempty"`
	Version              int64         `dynamodbav:"version"`
	AllocatedAt          string        `dynamodbav:"allocatedAt,omitempty"`
	LinkedAt             string        `dynamodbav:"linkedAt,omitempty"`
	LinkInfo             *linkInfoItem `dynamodbav:"linkInfo,omitempty"`
	RecoveredByLink      bool          `dynamodbav:"recoveredByLink,omitempty"`
	LastHeartbeatAt      string        `dynamodbav:"lastHeartbeatAt,omitempty"`
	EndedAt              string        `dynamodbav:"endedAt,omitempty"`
	EndReason            string        `dynamodbav:"endReason,omitempty"`
	UnhealthyAt          string        `dynamodbav:"unhealthyAt,omitempty"`
	UnhealthyReason      string        `dynamodbav:"unhealthyReason,omitempty"`
	// HealthShard and HealthDeadline key the sparse HealthDeadlineIndex:
	// present only while the health sweep must watch the instance.
	HealthShard    string `dynamodbav:"healthShard,omitempty"`
	HealthDeadline int64  `dynamodbav:"healthDeadline,omitempty"`
	// A queued placement's schedule (ms); queueTicket is compared by the
	// queue worker's claim.
	QueueStartedAt int64  `dynamodbav:"queueStartedAt,omitempty"`
	QueuedUntil    int64  `dynamodbav:"queuedUntil,omitempty"`
	QueueTicket    string `dynamodbav:"queueTicket,omitempty"`
	QueueNextAt    int64  `dynamodbav:"queueNextAt,omitempty"`
}

// attributeOrder is every attribute a write of a record sets or clears but
// its key and version (those have their own clauses), in item's order:
// the order of an update's clauses.
var attributeOrder = []string{"state", "desiredRegion", "gameServerVersion", "serverArgs", "regionInputs", "latencyRelaxed",
	"environment", "armadaSet", "region", "fallbackUsed", "server", "placement", "roomServer", "scheduling", "dedicated", "fromMatch", "gameLift",
	"attempts", "failureCode", "failureMessage", "partnerGameTokenHash", "candidateTokenHashes", "claimId", "leaseExpiresAt",
	"createdAt", "updatedAt", "allocatedAt", "expiresAt", "linkedAt", "linkInfo", "recoveredByLink", "lastHeartbeatAt", "endedAt", "endReason",
	"unhealthyAt", "unhealthyReason", "healthShard", "healthDeadline", "queueStartedAt", "queuedUntil", "queueTicket", "queueNextAt"}

// optional lists the attributes a record may leave out; a write clears
// whichever of them it does not set, so nothing stale survives a retry or
// a transition (leaving the health index is removing healthShard).
var optional = []string{"candidateTokenHashes", "regionInputs", "latencyRelaxed", "region", "server", "placement", "roomServer", "scheduling", "dedicated", "fromMatch", "gameLift", "allocatedAt",
	"attempts", "failureCode", "failureMessage", "expiresAt",
	"linkedAt", "linkInfo", "recoveredByLink", "lastHeartbeatAt", "endedAt", "endReason", "unhealthyAt", "unhealthyReason",
	"healthShard", "healthDeadline", "queueStartedAt", "queuedUntil", "queueTicket", "queueNextAt"}

type linkInfoItem struct {
	Address    string         `dynamodbav:"address,omitempty"`
	Ports      map[string]int `dynamodbav:"ports,omitempty"`
	ServerName string         `dynamodbav:"serverName,omitempty"`
}

// HealthShards spreads the health index over partitions, so the sweep
// lists its shards at once and no partition takes every claim's and end's
// index write (one takes ~1,000 writes/s); heartbeats write none.
const HealthShards = 16

// HealthShard is the index shard of a game instance.
func HealthShard(gameInstanceID string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(gameInstanceID))
	return fmt.Sprintf("%02d", h.Sum32()%HealthShards)
}

type serverItem struct {
	Address string         `dynamodbav:"address"`
	IP      string         `dynamodbav:"ip"`
	Ports   map[string]int `dynamodbav:"ports"`
}

type attemptItem struct {
	Region          string `dynamodbav:"region"`
	Reason          string `dynamodbav:"reason,omitempty"`
	Status          int    `dynamodbav:"status"`
	Error           string `dynamodbav:"error,omitempty"`
	Body            string `dynamodbav:"body,omitempty"`
	DurationMs      int64  `dynamodbav:"durationMs"`
	SuspectedOrphan bool   `dynamodbav:"suspectedOrphan,omitempty"`
	RateLimited     bool   `dynamodbav:"rateLimited,omitempty"`
	AllocatorRegion string `dynamodbav:"allocatorRegion,omitempty"`
	// AllocatorKind is stored for an Agones allocator's attempts only:
	// every other Allocator attempt is GameFabric's (all of them, before
	// there was another kind), so a GameFabric record does not grow.
	AllocatorKind  string  `dynamodbav:"allocatorKind,omitempty"`
	GameServerName string  `dynamodbav:"gameServerName,omitempty"`
	NodeName       string  `dynamodbav:"nodeName,omitempty"`
	Placement      string  `dynamodbav:"placement,omitempty"`
	Server         string  `dynamodbav:"server,omitempty"`
	MaxLatencyMs   float64 `dynamodbav:"maxPlayerLatencyMs,omitempty"`
}

func toItem(r gameinstance.Record) item {
	it := item{
		GameInstanceID:       r.GameInstanceID,
		State:                string(r.State),
		DesiredRegion:        r.Fingerprint.DesiredRegion,
		GameServerVersion:    r.Fingerprint.GameServerVersion,
		ServerArgs:           r.Fingerprint.ServerArgs,
		RegionInputs:         r.Fingerprint.RegionInputs,
		Scheduling:           string(r.Fingerprint.Scheduling),
		Dedicated:            r.Fingerprint.Dedicated,
		FromMatch:            r.Fingerprint.Match,
		GameLift:             r.Fingerprint.GameLift,
		AllocatedAt:          FormatTime(r.AllocatedAt),
		Placement:            string(r.Placement),
		RoomServer:           r.RoomServer,
		LatencyRelaxed:       r.LatencyRelaxed,
		Environment:          r.Environment,
		ArmadaSet:            r.ArmadaSet,
		Region:               r.Region,
		FallbackUsed:         r.FallbackUsed,
		PartnerGameTokenHash: r.PartnerGameTokenHash,
		CandidateTokenHashes: r.CandidateTokenHashes,
		ClaimID:              r.ClaimID,
		LeaseExpiresAt:       r.LeaseExpiresAt.UnixMilli(),
		CreatedAt:            FormatTime(r.CreatedAt),
		UpdatedAt:            FormatTime(r.UpdatedAt),
		Version:              r.Version,
		LinkedAt:             FormatTime(r.LinkedAt),
		RecoveredByLink:      r.RecoveredByLink,
		LastHeartbeatAt:      FormatTime(r.LastHeartbeatAt),
		EndedAt:              FormatTime(r.EndedAt),
		EndReason:            r.EndReason,
		UnhealthyAt:          FormatTime(r.UnhealthyAt),
		UnhealthyReason:      r.UnhealthyReason,
	}
	if !r.ExpiresAt.IsZero() {
		it.ExpiresAt = r.ExpiresAt.Unix()
	}
	if !r.HealthDeadline.IsZero() {
		it.HealthShard, it.HealthDeadline = HealthShard(r.GameInstanceID), r.HealthDeadline.UnixMilli()
	}
	if r.LinkInfo != nil {
		it.LinkInfo = &linkInfoItem{Address: r.LinkInfo.Address, Ports: r.LinkInfo.Ports, ServerName: r.LinkInfo.ServerName}
	}
	if r.Server != nil {
		it.Server = &serverItem{Address: r.Server.Address, IP: r.Server.IP, Ports: r.Server.Ports}
	}
	for _, a := range r.Attempts {
		kind := a.AllocatorKind
		if kind == gameinstance.AllocatorGameFabric {
			kind = ""
		}
		it.Attempts = append(it.Attempts, attemptItem{Region: a.Region, Reason: a.Reason, Status: a.Status, Error: a.Error, Body: a.Body,
			DurationMs: a.DurationMs, SuspectedOrphan: a.SuspectedOrphan, RateLimited: a.RateLimited, AllocatorRegion: a.AllocatorRegion,
			AllocatorKind: string(kind), GameServerName: a.GameServerName, NodeName: a.NodeName,
			Placement: string(a.Placement), Server: a.Server, MaxLatencyMs: a.MaxPlayerLatencyMs})
	}
	if q := r.Queue; q != nil {
		it.QueueStartedAt, it.QueuedUntil, it.QueueTicket, it.QueueNextAt = q.StartedAt.UnixMilli(), q.Until.UnixMilli(), q.Ticket, q.NextAt.UnixMilli()
	}
	if r.Failure != nil {
		it.FailureCode, it.FailureMessage = string(r.Failure.Code), r.Failure.Message
	}
	return it
}

func (it item) record() gameinstance.Record {
	r := gameinstance.Record{
		GameInstanceID: it.GameInstanceID,
		State:          gameinstance.State(it.State),
		Fingerprint: gameinstance.Fingerprint{
			DesiredRegion:     it.DesiredRegion,
			GameServerVersion: it.GameServerVersion,
			ServerArgs:        it.ServerArgs,
			RegionInputs:      it.RegionInputs,
			Scheduling:        gameinstance.Scheduling(it.Scheduling),
			Dedicated:         it.Dedicated,
			Match:             it.FromMatch,
			GameLift:          it.GameLift,
		},
		AllocatedAt:          ParseTime(it.AllocatedAt),
		Placement:            gameinstance.Placement(it.Placement),
		RoomServer:           it.RoomServer,
		LatencyRelaxed:       it.LatencyRelaxed,
		Environment:          it.Environment,
		ArmadaSet:            it.ArmadaSet,
		Region:               it.Region,
		FallbackUsed:         it.FallbackUsed,
		PartnerGameTokenHash: it.PartnerGameTokenHash,
		CandidateTokenHashes: it.CandidateTokenHashes,
		ClaimID:              it.ClaimID,
		LeaseExpiresAt:       time.UnixMilli(it.LeaseExpiresAt).UTC(),
		CreatedAt:            ParseTime(it.CreatedAt),
		UpdatedAt:            ParseTime(it.UpdatedAt),
		Version:              it.Version,
		LinkedAt:             ParseTime(it.LinkedAt),
		RecoveredByLink:      it.RecoveredByLink,
		LastHeartbeatAt:      ParseTime(it.LastHeartbeatAt),
		EndedAt:              ParseTime(it.EndedAt),
		EndReason:            it.EndReason,
		UnhealthyAt:          ParseTime(it.UnhealthyAt),
		UnhealthyReason:      it.UnhealthyReason,
	}
	if it.ExpiresAt != 0 {
		r.ExpiresAt = time.Unix(it.ExpiresAt, 0).UTC()
	}
	if it.HealthDeadline != 0 {
		r.HealthDeadline = time.UnixMilli(it.HealthDeadline).UTC()
	}
	if it.LinkInfo != nil {
		r.LinkInfo = &gameinstance.LinkInfo{Address: it.LinkInfo.Address, Ports: it.LinkInfo.Ports, ServerName: it.LinkInfo.ServerName}
	}
	if it.Server != nil {
		r.Server = &gameinstance.Server{Address: it.Server.Address, IP: it.Server.IP, Ports: it.Server.Ports}
	}
	for _, a := range it.Attempts {
		kind := gameinstance.AllocatorKind(a.AllocatorKind)
		if kind == "" && a.Placement != string(gameinstance.PlacementRoom) {
			kind = gameinstance.AllocatorGameFabric
		}
		r.Attempts = append(r.Attempts, gameinstance.Attempt{Region: a.Region, Reason: a.Reason, Status: a.Status, Error: a.Error, Body: a.Body,
			DurationMs: a.DurationMs, SuspectedOrphan: a.SuspectedOrphan, RateLimited: a.RateLimited, AllocatorRegion: a.AllocatorRegion,
			AllocatorKind: kind, GameServerName: a.GameServerName, NodeName: a.NodeName,
			Placement: gameinstance.Placement(a.Placement), Server: a.Server, MaxPlayerLatencyMs: a.MaxLatencyMs})
	}
	if it.QueuedUntil != 0 {
		r.Queue = &gameinstance.Queue{StartedAt: time.UnixMilli(it.QueueStartedAt).UTC(), Until: time.UnixMilli(it.QueuedUntil).UTC(),
			Ticket: it.QueueTicket, NextAt: time.UnixMilli(it.QueueNextAt).UTC()}
	}
	if it.FailureCode != "" {
		r.Failure = &gameinstance.Failure{Code: gameinstance.Code(it.FailureCode), Message: it.FailureMessage}
	}
	return r
}

// FormatTime is how the tables store times: RFC 3339 with nanoseconds,
// UTC; "" for the zero time, so optional times are omitted. ParseTime
// reads it back (zero for "" or garbage). The ping cache's table stores
// its times the same way.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func ParseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}
