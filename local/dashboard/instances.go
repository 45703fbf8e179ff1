package dashboard

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// Bounds of one listing of game instances: a local table holds what a
// developer allocated, rarely more than a few hundred.
const (
	maxScanned = 2000 // items read per listing
	maxShown   = 100  // newest instances shown
)

// Listing is one read of the game instances table.
type Listing struct {
	Records []gameinstance.Record // newest first, at most maxShown
	// More: the table held more than was read or shown.
	More bool
	// Unreadable counts items that are not game instance records.
	Unreadable int
}

// ScanInstances lists the game instances in table, newest first.
func ScanInstances(ctx context.Context, db dynamodb.ScanAPIClient, table string) (Listing, error) {
	var l Listing
	p := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true), Limit: aws.Int32(500)})
	scanned := 0
	for p.HasMorePages() && scanned < maxScanned {
		page, err := p.NextPage(ctx)
		if err != nil {
			return Listing{}, fmt.Errorf("scan %s: %w", table, err)
		}
		for _, item := range page.Items {
			scanned++
			r, err := store.DecodeGameInstance(item)
			if err != nil {
				l.Unreadable++
				continue
			}
			l.Records = append(l.Records, r)
		}
	}
	l.More = p.HasMorePages()
	recs := l.Records
	sort.Slice(recs, func(i, j int) bool {
		if !recs[i].CreatedAt.Equal(recs[j].CreatedAt) {
			return recs[i].CreatedAt.After(recs[j].CreatedAt)
		}
		return recs[i].GameInstanceID > recs[j].GameInstanceID
	})
	if len(recs) > maxShown {
		l.Records, l.More = recs[:maxShown], true
	}
	return l, nil
}

// instanceView is what the page shows of a record: what the API's GET
// answers, plus the request it came from; never a token hash or claim.
type instanceView struct {
	GameInstanceID    string      `json:"gameInstanceId"`
	State             string      `json:"state"`
	DesiredRegion     string      `json:"desiredRegion,omitempty"`
	GameServerVersion string      `json:"gameServerVersion,omitempty"`
	Region            string      `json:"region,omitempty"`
	FallbackUsed      bool        `json:"fallbackUsed"`
	LatencyRelaxed    bool        `json:"latencyFilterRelaxed,omitempty"`
	Server            *serverView `json:"server,omitempty"`
	Placement         string      `json:"placement,omitempty"` // room or allocator, once there is a server
	ServerName        string      `json:"serverName,omitempty"`
	// Match: a FlexMatch match's instance (its id is the matchId).
	Match           bool               `json:"match,omitempty"`
	Attempts        []apishape.Attempt `json:"attempts"`
	Error           *failureView       `json:"error,omitempty"`
	CreatedAt       time.Time          `json:"createdAt,omitzero"`
	UpdatedAt       time.Time          `json:"updatedAt,omitzero"`
	LinkedAt        time.Time          `json:"linkedAt,omitzero"`
	LastHeartbeatAt time.Time          `json:"lastHeartbeatAt,omitzero"`
	EndedAt         time.Time          `json:"endedAt,omitzero"`
	EndReason       string             `json:"endReason,omitempty"`
	UnhealthyAt     time.Time          `json:"unhealthyAt,omitzero"`
	UnhealthyReason string             `json:"unhealthyReason,omitempty"`
	// QueuedUntil is the deadline of a placement that was ever queued,
	// kept once it is placed or failed, as the API answers it.
	QueuedUntil time.Time `json:"queuedUntil,omitzero"`
	// NextAttemptAt is when the queue worker tries a Queued placement
	// again (the Retry-After of its GET); zero in every other state.
	NextAttemptAt time.Time `json:"nextAttemptAt,omitzero"`
}

type serverView struct {
	Address string         `json:"address"`
	Ports   map[string]int `json:"ports,omitempty"`
}

type failureView struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func viewOf(r gameinstance.Record) instanceView {
	v := instanceView{
		GameInstanceID: r.GameInstanceID, State: string(r.State),
		DesiredRegion: r.Fingerprint.DesiredRegion, GameServerVersion: r.Fingerprint.GameServerVersion,
		Region: r.Region, FallbackUsed: r.FallbackUsed, LatencyRelaxed: r.LatencyRelaxed, Placement: string(r.PlacedBy()),
		Match:     r.Fingerprint.Match,
		Attempts:  httpapi.AttemptsOf(r),
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, LinkedAt: r.LinkedAt, LastHeartbeatAt: r.LastHeartbeatAt,
		EndedAt: r.EndedAt, EndReason: r.EndReason, UnhealthyAt: r.UnhealthyAt, UnhealthyReason: r.UnhealthyReason,
	}
	if r.Server != nil {
		v.Server = &serverView{Address: r.Server.Address, Ports: r.Server.Ports}
	}
	if r.LinkInfo != nil {
		v.ServerName = r.LinkInfo.ServerName
	}
	if r.Failure != nil {
		v.Error = &failureView{Code: string(r.Failure.Code), Message: r.Failure.Message}
	}
	if r.Queue != nil {
		v.QueuedUntil = r.Queue.Until
		if r.State == gameinstance.StateQueued {
			v.NextAttemptAt = r.Queue.NextAt
		}
	}
	return v
}
