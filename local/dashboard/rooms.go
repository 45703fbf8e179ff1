package dashboard

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// maxServersScanned bounds one listing of the game servers that offered
// rooms: a local fleet runs a handful, and a record outlives its process
// only until it expires.
const maxServersScanned = 500

// ServerListing is one read of the game servers table.
type ServerListing struct {
	Servers []gameinstance.GameServer // by region, then address
	// More: the table held more than was read.
	More bool
	// Unreadable counts items that are not game-server records.
	Unreadable int
}

// ScanGameServers lists the game servers in table (GameServersTable). It
// reads like ScanInstances rather than through store.GameServers.Scan: a
// consistent read, so a room taken or given back shows at the next poll,
// and a count of the items it could not read, for the page to say so.
func ScanGameServers(ctx context.Context, db dynamodb.ScanAPIClient, table string) (ServerListing, error) {
	var l ServerListing
	p := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true), Limit: aws.Int32(100)})
	scanned := 0
	for p.HasMorePages() && scanned < maxServersScanned {
		page, err := p.NextPage(ctx)
		if err != nil {
			return ServerListing{}, fmt.Errorf("scan %s: %w", table, err)
		}
		for _, item := range page.Items {
			scanned++
			gs, err := store.DecodeGameServer(item)
			if err != nil {
				l.Unreadable++
				continue
			}
			l.Servers = append(l.Servers, gs)
		}
	}
	l.More = p.HasMorePages()
	sort.Slice(l.Servers, func(i, j int) bool {
		a, b := l.Servers[i], l.Servers[j]
		if a.Region != b.Region {
			return a.Region < b.Region
		}
		return a.Address < b.Address
	})
	return l, nil
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
	sessions := slices.Clone(gs.Sessions)
	if sessions == nil {
		sessions = []string{}
	}
	slices.Sort(sessions)
	return roomServerView{Address: gs.Address, Capacity: gs.Capacity, InUse: gs.InUse, Accepting: gs.Accepting,
		ClosedReason: gs.ClosedReason, CallbackFailures: gs.CallbackFailures, Sessions: sessions, UpdatedAt: gs.UpdatedAt}
}
