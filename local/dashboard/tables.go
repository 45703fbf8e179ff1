package dashboard

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// Bounds of what one state lists: a local table holds what a developer
// allocated, rarely more than a few hundred instances, and a local fleet
// runs a handful of servers (a record outlives its process only until it
// expires).
const (
	maxScanned        = 2000 // game instances read per listing
	maxShown          = 100  // newest instances shown
	maxServersScanned = 500
	maxEvents         = 100 // the latest events the page lists
)

// Listing is one read of a table.
type Listing[T any] struct {
	Records []T
	// More: the table held more than was read or shown.
	More bool
	// Unreadable counts items that are not records of the table's kind.
	Unreadable int
}

// scan reads up to limit items of table, decoding each. The reads are
// consistent, so a state or a room taken shows at the next poll; this is
// why the game servers are not read through store.GameServers.Scan.
func scan[T any](ctx context.Context, db dynamodb.ScanAPIClient, table string, limit int, decode func(map[string]types.AttributeValue) (T, error)) (Listing[T], error) {
	var l Listing[T]
	p := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true), Limit: aws.Int32(500)})
	for scanned := 0; p.HasMorePages() && scanned < limit; {
		page, err := p.NextPage(ctx)
		if err != nil {
			return Listing[T]{}, fmt.Errorf("scan %s: %w", table, err)
		}
		for _, item := range page.Items {
			scanned++
			if r, err := decode(item); err != nil {
				l.Unreadable++
			} else {
				l.Records = append(l.Records, r)
			}
		}
	}
	l.More = p.HasMorePages()
	return l, nil
}

// ScanInstances lists the game instances in table, newest first.
func ScanInstances(ctx context.Context, db dynamodb.ScanAPIClient, table string) (Listing[gameinstance.Record], error) {
	l, err := scan(ctx, db, table, maxScanned, store.DecodeGameInstance)
	slices.SortFunc(l.Records, func(a, b gameinstance.Record) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(b.GameInstanceID, a.GameInstanceID))
	})
	if len(l.Records) > maxShown {
		l.Records, l.More = l.Records[:maxShown], true
	}
	return l, err
}

// ScanGameServers lists the game servers in table (GameServersTable), by
// region, then address.
func ScanGameServers(ctx context.Context, db dynamodb.ScanAPIClient, table string) (Listing[gameinstance.GameServer], error) {
	l, err := scan(ctx, db, table, maxServersScanned, store.DecodeGameServer)
	slices.SortFunc(l.Records, func(a, b gameinstance.GameServer) int {
		return cmp.Or(strings.Compare(a.Region, b.Region), strings.Compare(a.Address, b.Address))
	})
	return l, err
}

// Instance is what the page shows of a record: what the API's GET
// answers (never a token hash, claim or upstream body), plus the request
// it came from and when a Queued placement is tried again.
type Instance struct {
	apishape.Allocation
	DesiredRegion     string `json:"desiredRegion,omitempty"`
	GameServerVersion string `json:"gameServerVersion,omitempty"`
	// Match: a FlexMatch match's instance (its id is the matchId).
	Match bool `json:"match,omitempty"`
	// NextAttemptAt is when the queue worker tries a Queued placement
	// again (the Retry-After of its GET); zero in every other state.
	NextAttemptAt time.Time `json:"nextAttemptAt,omitzero"`
}

func viewOf(r gameinstance.Record) Instance {
	v := Instance{Allocation: httpapi.ViewOf(r), DesiredRegion: r.Fingerprint.DesiredRegion,
		GameServerVersion: r.Fingerprint.GameServerVersion, Match: r.Fingerprint.Match}
	if r.Queue != nil && r.State == gameinstance.StateQueued {
		v.NextAttemptAt = r.Queue.NextAt
	}
	return v
}

// roomServerView is what the page shows of a game server that offered
// rooms: how many are in use and by which game instances. Never its
// callback token, a credential; it is built field by field so that a new
// field of the record shows only when added here.
type roomServerView struct {
	Address          string    `json:"address"`
	Capacity         int       `json:"capacity"`
	InUse            int       `json:"inUse"`
	Accepting        bool      `json:"accepting"`
	ClosedReason     string    `json:"closedReason,omitempty"`
	CallbackFailures int       `json:"callbackFailures,omitempty"` // in a row; at 2 the server closes
	Sessions         []string  `json:"sessions"`                   // game instance ids, sorted
	UpdatedAt        time.Time `json:"updatedAt,omitzero"`
}

func roomServerOf(gs gameinstance.GameServer) roomServerView {
	sessions := append([]string{}, gs.Sessions...)
	slices.Sort(sessions)
	return roomServerView{Address: gs.Address, Capacity: gs.Capacity, InUse: gs.InUse, Accepting: gs.Accepting,
		ClosedReason: gs.ClosedReason, CallbackFailures: gs.CallbackFailures, Sessions: sessions, UpdatedAt: gs.UpdatedAt}
}
