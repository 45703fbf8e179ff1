//go:build integration

package tests

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

func rawItemOf(t *testing.T, table, key, id string) map[string]types.AttributeValue {
	t.Helper()
	out, err := stack.ddb.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table),
		Key: map[string]types.AttributeValue{key: &types.AttributeValueMemberS{Value: id}}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatalf("get item: %v", err)
	}
	return out.Item
}

// MatchesTable as the template creates it on DynamoDB Local: the first
// copy of a match's event is the one kept, and it reads back as it was
// written.
func TestMatchesStoreKeepAndGet(t *testing.T) {
	ctx := context.Background()
	table := newTables(t)["MatchesTable"]
	matches := store.NewMatches(stack.ddb, table, 24*time.Hour)

	if _, err := matches.Get(ctx, "m-unknown"); !errors.Is(err, gameinstance.ErrNotFound) {
		t.Fatalf("Get of an unknown match: %v, want ErrNotFound", err)
	}
	first := gameinstance.Match{ID: unique("m"), EventID: "event-1",
		ConfigurationArn: "arn:aws:gamelift:eu-central-1:123456789012:matchmakingconfiguration/arena-standalone",
		Detail:           []byte(`{"tickets":[{"ticketId":"t-1","players":[{"playerId":"p1","team":"red & gold"}]}],"type":"MatchmakingSucceeded","matchId":"m"}`),
		TicketIDs:        []string{"t-1", "t.2"}}
	before := time.Now()
	if err := matches.Keep(ctx, first); err != nil {
		t.Fatal(err)
	}
	got, err := matches.Get(ctx, first.ID)
	if err != nil || !reflect.DeepEqual(got, first) {
		t.Fatalf("Get = %+v, %v; want %+v", got, err, first)
	}

	// A second copy of the event (another EventBridge id) is a no-op.
	second := first
	second.EventID, second.Detail, second.TicketIDs = "event-2", []byte(`{"type":"MatchmakingSucceeded"}`), []string{"t-9"}
	if err := matches.Keep(ctx, second); err != nil {
		t.Fatalf("a second copy: %v, want a no-op", err)
	}
	if got, err := matches.Get(ctx, first.ID); err != nil || !reflect.DeepEqual(got, first) {
		t.Fatalf("after a second copy Get = %+v, %v; want the first", got, err)
	}

	// The item as the contract describes it: detail S, ticketIds L of S,
	// createdAt and expiresAt (the TTL) in epoch seconds.
	item := rawItemOf(t, table, store.MatchKey, first.ID)
	if _, ok := item["detail"].(*types.AttributeValueMemberS); !ok {
		t.Errorf("detail is %T, want S", item["detail"])
	}
	if l, ok := item["ticketIds"].(*types.AttributeValueMemberL); !ok || len(l.Value) != 2 {
		t.Errorf("ticketIds is %T, want L of S", item["ticketIds"])
	}
	created, _ := strconv.ParseInt(num(item, "createdAt"), 10, 64)
	expires, _ := strconv.ParseInt(num(item, "expiresAt"), 10, 64)
	if created < before.Unix()-1 || created > time.Now().Unix()+1 || expires != created+int64((24*time.Hour).Seconds()) {
		t.Errorf("createdAt %d, expiresAt %d; want now and a day later", created, expires)
	}
}

// A match too large to keep keeps its tickets (AllocationFailed names
// them) without a detail; the largest detail kept, with 200 ticket ids of
// the longest kind, fits an item.
func TestMatchesStoreBounds(t *testing.T) {
	ctx := context.Background()
	matches := store.NewMatches(stack.ddb, newTables(t)["MatchesTable"], time.Hour)
	noDetail := gameinstance.Match{ID: unique("m"), EventID: "e", TicketIDs: []string{"t-1"}}
	if err := matches.Keep(ctx, noDetail); err != nil {
		t.Fatal(err)
	}
	if got, err := matches.Get(ctx, noDetail.ID); err != nil || got.Detail != nil || !reflect.DeepEqual(got.TicketIDs, noDetail.TicketIDs) {
		t.Fatalf("Get = %+v, %v", got, err)
	}

	largest := gameinstance.Match{ID: unique("m"), EventID: strings.Repeat("e", 256), ConfigurationArn: strings.Repeat("a", 256),
		Detail: []byte(`{"note":"` + strings.Repeat("n", gameinstance.MaxMatchDetailBytes-11) + `"}`)}
	for i := range gameinstance.MaxMatchPlayers {
		largest.TicketIDs = append(largest.TicketIDs, fmt.Sprintf("%0128d", i))
	}
	if err := matches.Keep(ctx, largest); err != nil {
		t.Fatalf("the largest match: %v", err)
	}
	if got, err := matches.Get(ctx, largest.ID); err != nil || !reflect.DeepEqual(got, largest) {
		t.Fatalf("the largest match reads back differently: %v", err)
	}
}

// Copies of an event handled at once: every Keep succeeds, one copy is kept.
func TestMatchesStoreConcurrentKeeps(t *testing.T) {
	ctx := context.Background()
	matches := store.NewMatches(stack.ddb, newTables(t)["MatchesTable"], time.Hour)
	id := unique("m")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = matches.Keep(ctx, gameinstance.Match{ID: id, EventID: fmt.Sprintf("copy-%d", i), TicketIDs: []string{"t-1"},
				Detail: []byte(fmt.Sprintf(`{"copy":%d}`, i))})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("copy %d: %v", i, err)
		}
	}
	got, err := matches.Get(ctx, id)
	if err != nil || string(got.Detail) != fmt.Sprintf(`{"copy":%s}`, strings.TrimPrefix(got.EventID, "copy-")) {
		t.Fatalf("kept %+v, %v: one copy whole, not a mix", got, err)
	}
}

// A match's Failed record is final on the real store: its players were
// told (AllocationFailed), so a late copy of its event must not place the
// match after all. So is a GameLift placement's: a PlacementId is never
// reused. An API call's Failed record is still taken over.
func TestClaimKeepsAMatchsFailure(t *testing.T) {
	ctx := context.Background()
	tables := newTables(t)
	records := store.NewGameInstances(stack.ddb, tables["GameInstancesTable"])
	now := time.Now()
	failed := func(id string, fp gameinstance.Fingerprint) gameinstance.Record {
		return gameinstance.Record{GameInstanceID: id, State: gameinstance.StateFailed, ClaimID: "first", Fingerprint: fp,
			Failure: &gameinstance.Failure{Code: gameinstance.CodeNoCapacity, Message: "no servers"}, CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour)}
	}
	claim := func(id string, fp gameinstance.Fingerprint) gameinstance.Record {
		return gameinstance.Record{GameInstanceID: id, State: gameinstance.StateAllocating, ClaimID: "second", Fingerprint: fp,
			LeaseExpiresAt: now.Add(time.Minute), CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour)}
	}
	for _, tc := range []struct {
		name      string
		fp        gameinstance.Fingerprint
		attribute string // what marks the record as final
		takenOver bool
	}{
		{"a match's Failed record is final", gameinstance.Fingerprint{Match: true}, "fromMatch", false},
		{"a GameLift placement's Failed record is final", gameinstance.Fingerprint{GameLift: "digest"}, "gameLift", false},
		{"an API call's Failed record is taken over", gameinstance.Fingerprint{}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := unique("gi")
			if _, err := records.Claim(ctx, failed(id, tc.fp), now.Add(-2*time.Minute)); err != nil {
				t.Fatal(err)
			}
			item := rawItemOf(t, tables["GameInstancesTable"], store.GameInstanceKey, id)
			for _, attr := range []string{"fromMatch", "gameLift"} {
				if _, ok := item[attr]; ok != (attr == tc.attribute) {
					t.Fatalf("%s stored %v", attr, ok)
				}
			}
			_, err := records.Claim(ctx, claim(id, tc.fp), now.Add(-2*time.Minute))
			var conflict *gameinstance.ClaimConflictError
			switch {
			case tc.takenOver && err != nil:
				t.Fatalf("claim: %v, want the Failed record taken over", err)
			case !tc.takenOver && (!errors.As(err, &conflict) || conflict.Existing.ClaimID != "first" || conflict.Existing.Fingerprint != tc.fp):
				t.Fatalf("claim: %v, want a conflict with the final Failed record", err)
			}
			got, err := records.Get(ctx, id)
			want := map[bool]string{true: "second", false: "first"}[tc.takenOver]
			if err != nil || got.ClaimID != want || got.Fingerprint != tc.fp {
				t.Fatalf("stored %+v, %v; want claim %s", got, err, want)
			}
		})
	}
}

// allocation.Service.Reject on the real store: a match is recorded Failed
// once; a second rejection, or one after it was placed, changes nothing.
func TestRejectOnTheStore(t *testing.T) {
	ctx := context.Background()
	tables := newTables(t)
	records := store.NewGameInstances(stack.ddb, tables["GameInstancesTable"])
	o := allocation.DefaultOptions()
	o.Store, o.Defaults.Region, o.Defaults.Environment, o.Defaults.ArmadaSet = records, "eu", "prod", "arena"
	svc := allocation.NewService(o)
	id := unique("m")
	tooLarge := gameinstance.Failure{Code: gameinstance.CodeMatchTooLarge, Message: "the match has 201 players"}
	rec, created, err := svc.Reject(ctx, id, tooLarge)
	if err != nil || !created || rec.State != gameinstance.StateFailed {
		t.Fatalf("first: %+v, %v, %v", rec, created, err)
	}
	stored, err := records.Get(ctx, id)
	if err != nil || stored.State != gameinstance.StateFailed || !stored.Fingerprint.Match || stored.Failure == nil || *stored.Failure != tooLarge || stored.ExpiresAt.IsZero() {
		t.Fatalf("stored %+v, %v", stored, err)
	}
	again, created, err := svc.Reject(ctx, id, gameinstance.Failure{Code: gameinstance.CodeInvalidMatch, Message: "later"})
	if err != nil || created || again.ClaimID != stored.ClaimID || *again.Failure != tooLarge {
		t.Fatalf("second: %+v, %v, %v; want the first kept", again, created, err)
	}
}
