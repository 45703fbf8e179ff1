// Package store keeps game instance records in DynamoDB.
package store

import (
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
)

// item is a record's DynamoDB shape. Times that conditions compare are
// numbers (lease in ms, TTL in seconds as DynamoDB's TTL requires); times
// people read are RFC 3339.
type item struct {
	GameInstanceID       string        `dynamodbav:"gameInstanceId"`
	State                string        `dynamodbav:"state"`
	DesiredRegion        string        `dynamodbav:"desiredRegion"`
	GameServerVersion    string        `dynamodbav:"gameServerVersion"`
	ServerArgs           string        `dynamodbav:"serverArgs"`
	Environment          string        `dynamodbav:"environment"`
	ArmadaSet            string        `dynamodbav:"armadaSet"`
	Region               string        `dynamodbav:"region,omitempty"`
	FallbackUsed         bool          `dynamodbav:"fallbackUsed"`
	Server               *serverItem   `dynamodbav:"server,omitempty"`
	Attempts             []attemptItem `dynamodbav:"attempts,omitempty"`
	FailureCode          string        `dynamodbav:"failureCode,omitempty"`
	FailureMessage       string        `dynamodbav:"failureMessage,omitempty"`
	PartnerGameTokenHash string        `dynamodbav:"partnerGameTokenHash"`
	ClaimID              string        `dynamodbav:"claimId"`
	LeaseExpiresAt       int64         `dynamodbav:"leaseExpiresAt"`
	CreatedAt            string        `dynamodbav:"createdAt"`
	UpdatedAt            string        `dynamodbav:"updatedAt"`
	ExpiresAt            int64         `dynamodbav:"expiresAt"`
}

// optional lists the attributes an outcome may leave out; a write clears
// whichever of them it does not set, so nothing stale survives a retry.
var optional = []string{"region", "server", "attempts", "failureCode", "failureMessage"}

type serverItem struct {
	Address string         `dynamodbav:"address"`
	IP      string         `dynamodbav:"ip"`
	Ports   map[string]int `dynamodbav:"ports"`
}

type attemptItem struct {
	Region     string `dynamodbav:"region"`
	Status     int    `dynamodbav:"status"`
	Error      string `dynamodbav:"error,omitempty"`
	Body       string `dynamodbav:"body,omitempty"`
	DurationMs int64  `dynamodbav:"durationMs"`
}

func toItem(r allocation.Record) item {
	it := item{
		GameInstanceID:       r.GameInstanceID,
		State:                string(r.State),
		DesiredRegion:        r.Fingerprint.DesiredRegion,
		GameServerVersion:    r.Fingerprint.GameServerVersion,
		ServerArgs:           r.Fingerprint.ServerArgs,
		Environment:          r.Environment,
		ArmadaSet:            r.ArmadaSet,
		Region:               r.Region,
		FallbackUsed:         r.FallbackUsed,
		PartnerGameTokenHash: r.PartnerGameTokenHash,
		ClaimID:              r.ClaimID,
		LeaseExpiresAt:       r.LeaseExpiresAt.UnixMilli(),
		CreatedAt:            formatTime(r.CreatedAt),
		UpdatedAt:            formatTime(r.UpdatedAt),
		ExpiresAt:            r.ExpiresAt.Unix(),
	}
	if r.Server != nil {
		it.Server = &serverItem{Address: r.Server.Address, IP: r.Server.IP, Ports: r.Server.Ports}
	}
	for _, a := range r.Attempts {
		it.Attempts = append(it.Attempts, attemptItem{Region: a.Region, Status: a.Status, Error: a.Error, Body: a.Body, DurationMs: a.DurationMs})
	}
	if r.Failure != nil {
		it.FailureCode, it.FailureMessage = string(r.Failure.Code), r.Failure.Message
	}
	return it
}

func (it item) record() allocation.Record {
	r := allocation.Record{
		GameInstanceID: it.GameInstanceID,
		State:          allocation.State(it.State),
		Fingerprint: allocation.Fingerprint{
			DesiredRegion:     it.DesiredRegion,
			GameServerVersion: it.GameServerVersion,
			ServerArgs:        it.ServerArgs,
		},
		Environment:          it.Environment,
		ArmadaSet:            it.ArmadaSet,
		Region:               it.Region,
		FallbackUsed:         it.FallbackUsed,
		PartnerGameTokenHash: it.PartnerGameTokenHash,
		ClaimID:              it.ClaimID,
		LeaseExpiresAt:       time.UnixMilli(it.LeaseExpiresAt).UTC(),
		CreatedAt:            parseTime(it.CreatedAt),
		UpdatedAt:            parseTime(it.UpdatedAt),
		ExpiresAt:            time.Unix(it.ExpiresAt, 0).UTC(),
	}
	if it.Server != nil {
		r.Server = &allocation.Server{Address: it.Server.Address, IP: it.Server.IP, Ports: it.Server.Ports}
	}
	for _, a := range it.Attempts {
		r.Attempts = append(r.Attempts, allocation.Attempt{Region: a.Region, Status: a.Status, Error: a.Error, Body: a.Body, DurationMs: a.DurationMs})
	}
	if it.FailureCode != "" {
		r.Failure = &allocation.Failure{Code: allocation.Code(it.FailureCode), Message: it.FailureMessage}
	}
	return r
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}
