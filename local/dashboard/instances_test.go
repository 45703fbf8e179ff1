package dashboard

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// pages serves Scan pages of items, as DynamoDB does with a Limit.
type pages struct {
	items [][]map[string]types.AttributeValue
	calls int
	err   error
}

func (p *pages) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	if p.err != nil {
		return nil, p.err
	}
	if !aws.ToBool(in.ConsistentRead) {
		return nil, errors.New("want a consistent read: the page shows states as they change")
	}
	out := &dynamodb.ScanOutput{Items: p.items[p.calls]}
	p.calls++
	if p.calls < len(p.items) {
		out.LastEvaluatedKey = map[string]types.AttributeValue{"gameInstanceId": &types.AttributeValueMemberS{Value: fmt.Sprint(p.calls)}}
	}
	return out, nil
}

func records(t *testing.T, n int, first time.Time) []map[string]types.AttributeValue {
	var out []map[string]types.AttributeValue
	for i := range n {
		created := first.Add(time.Duration(i) * time.Second)
		item, err := store.Encode(gameinstance.Record{GameInstanceID: fmt.Sprintf("gi-%s", created.Format("150405")), State: gameinstance.StateLinked,
			CreatedAt: created, UpdatedAt: created})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, item)
	}
	return out
}

func TestScanInstances(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	junk := map[string]types.AttributeValue{"gameInstanceId": &types.AttributeValueMemberS{Value: "no-state"}}
	tests := []struct {
		name           string
		pages          [][]map[string]types.AttributeValue
		wantN          int
		wantNewest     string
		wantMore       bool
		wantUnreadable int
	}{
		{"empty", [][]map[string]types.AttributeValue{nil}, 0, "", false, 0},
		{"two pages, newest first", [][]map[string]types.AttributeValue{records(t, 3, t0), append(records(t, 2, t0.Add(time.Hour)), junk)}, 5, "gi-110001", false, 1},
		{"more than shown", [][]map[string]types.AttributeValue{records(t, maxShown+5, t0)}, maxShown, t0.Add(time.Duration(maxShown+4) * time.Second).Format("gi-150405"), true, 0},
		{"more than scanned", [][]map[string]types.AttributeValue{records(t, maxScanned, t0)[:maxScanned/2], records(t, maxScanned, t0)[maxScanned/2:], records(t, 1, t0)}, maxShown, "", true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := &pages{items: tt.pages}
			l, err := ScanInstances(context.Background(), db, "GameInstancesTable")
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Records) != tt.wantN || l.More != tt.wantMore || l.Unreadable != tt.wantUnreadable {
				t.Fatalf("%d records, more %v, unreadable %d", len(l.Records), l.More, l.Unreadable)
			}
			for i := 1; i < len(l.Records); i++ {
				if l.Records[i].CreatedAt.After(l.Records[i-1].CreatedAt) {
					t.Fatalf("not newest first at %d", i)
				}
			}
			if tt.wantNewest != "" && l.Records[0].GameInstanceID != tt.wantNewest {
				t.Errorf("newest = %s, want %s", l.Records[0].GameInstanceID, tt.wantNewest)
			}
			if tt.name == "more than scanned" && db.calls != 2 {
				t.Errorf("%d pages read, want the scan to stop at %d items", db.calls, maxScanned)
			}
		})
	}
	if _, err := ScanInstances(context.Background(), &pages{err: errors.New("boom")}, "T"); err == nil {
		t.Fatal("a failing scan is no error")
	}
}

func TestViewOfPlacement(t *testing.T) {
	srv := &gameinstance.Server{Address: "127.0.0.1:7001", Ports: map[string]int{"game": 7001}}
	tests := []struct {
		name string
		r    gameinstance.Record
		want string
	}{
		{"no server yet", gameinstance.Record{State: gameinstance.StateAllocating}, ""},
		{"a room", gameinstance.Record{State: gameinstance.StateLinked, Server: srv, Placement: gameinstance.PlacementRoom, RoomServer: srv.Address}, "room"},
		{"the Allocator", gameinstance.Record{State: gameinstance.StateLinked, Server: srv, Placement: gameinstance.PlacementAllocator}, "allocator"},
		{"recorded before rooms", gameinstance.Record{State: gameinstance.StateEnded, Server: srv}, "allocator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(viewOf(tt.r).Placement); got != tt.want {
				t.Errorf("placement %q, want %q", got, tt.want)
			}
		})
	}
}
