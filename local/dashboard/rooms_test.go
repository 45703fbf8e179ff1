package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// callbackToken is what every test server record carries as its session
// callback credential: the page must never show it.
const callbackToken = "cb-token-SECRET-0123456789abcdefghijklmnopqrstuvwxyz"

// serverItem is a GameServersTable item as the store writes it.
func serverItem(addr, region string, capacity int, accepting bool, sessions ...string) map[string]types.AttributeValue {
	n := func(v int) types.AttributeValue { return &types.AttributeValueMemberN{Value: strconv.Itoa(v)} }
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	item := map[string]types.AttributeValue{
		"address": s(addr), "region": s(region), "environment": s("prag"), "armadaSet": s("set"), "ip": s("127.0.0.1"),
		"ports":        &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"game": n(7001)}},
		"roomCapacity": n(capacity), "roomsInUse": n(len(sessions)), "freeRooms": n(capacity - len(sessions)),
		"accepting": &types.AttributeValueMemberBOOL{Value: accepting}, "callbackFailures": n(0),
		"callbackUrl": s("http://127.0.0.1:7601/sessions"), "callbackToken": s(callbackToken),
		"createdAt": s("2026-01-02T03:04:05Z"), "updatedAt": s("2026-01-02T03:04:06Z"),
	}
	if len(sessions) > 0 {
		item["sessions"] = &types.AttributeValueMemberSS{Value: sessions}
	}
	if accepting {
		item["roomPool"] = s(region + "/prag/set")
	} else {
		item["closedReason"] = s(gameinstance.ClosedByServer)
	}
	return item
}

func TestScanGameServers(t *testing.T) {
	many := func(n int) []map[string]types.AttributeValue {
		var out []map[string]types.AttributeValue
		for i := range n {
			out = append(out, serverItem(fmt.Sprintf("127.0.0.1:%d", 7000+i), "us-west", 4, true))
		}
		return out
	}
	junk := map[string]types.AttributeValue{"region": &types.AttributeValueMemberS{Value: "us-west"}} // no address
	tests := []struct {
		name           string
		pages          [][]map[string]types.AttributeValue
		want           []string // region/address, in order
		wantMore       bool
		wantUnreadable int
		wantCalls      int
	}{
		{"empty", [][]map[string]types.AttributeValue{nil}, nil, false, 0, 1},
		{"two pages, by region then address",
			[][]map[string]types.AttributeValue{
				{serverItem("127.0.0.1:7003", "us-west", 4, true), serverItem("127.0.0.1:7009", "eu-central-1", 2, false)},
				{junk, serverItem("127.0.0.1:7001", "us-west", 4, true, "gi-1")},
			},
			[]string{"eu-central-1/127.0.0.1:7009", "us-west/127.0.0.1:7001", "us-west/127.0.0.1:7003"}, false, 1, 2},
		{"more than scanned", [][]map[string]types.AttributeValue{many(maxServersScanned / 2), many(maxServersScanned / 2), many(1)},
			nil, true, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := &pages{items: tt.pages}
			l, err := ScanGameServers(context.Background(), db, "GameServersTable")
			if err != nil {
				t.Fatal(err)
			}
			if l.More != tt.wantMore || l.Unreadable != tt.wantUnreadable || db.calls != tt.wantCalls {
				t.Fatalf("more %v, unreadable %d, %d pages read", l.More, l.Unreadable, db.calls)
			}
			if tt.want == nil {
				return
			}
			var got []string
			for _, gs := range l.Records {
				got = append(got, gs.Region+"/"+gs.Address)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("servers %v, want %v", got, tt.want)
			}
		})
	}
	if _, err := ScanGameServers(context.Background(), &pages{err: errors.New("boom")}, "T"); err == nil {
		t.Fatal("a failing scan is no error")
	}
}

func TestRoomServersInState(t *testing.T) {
	usWest := gameinstance.GameServer{Address: "127.0.0.1:7001", Region: "us-west", Capacity: 4, InUse: 3, Accepting: true,
		Sessions: []string{"gi-3", "gi-1", "gi-2"}, CallbackURL: "http://127.0.0.1:7601/sessions", CallbackToken: callbackToken}
	closed := gameinstance.GameServer{Address: "127.0.0.1:7002", Region: "us-west", Capacity: 4, InUse: 1, ClosedReason: gameinstance.ClosedCallbackFailures,
		CallbackFailures: 2, Sessions: []string{"gi-4"}, CallbackToken: callbackToken}
	elsewhere := gameinstance.GameServer{Address: "127.0.0.1:7100", Region: "ap-south-1", Capacity: 2, Accepting: true, CallbackToken: callbackToken}
	tests := []struct {
		name         string
		source       func(context.Context) (serverListing, error) // nil: no rooms table
		wantRooms    map[string][]string                          // region -> "address inUse/capacity accepting closedReason sessions"
		wantProblems []string
	}{
		{name: "no rooms table", wantRooms: map[string][]string{"us-west": {}, "eu-central-1": {}}},
		{name: "none offered yet",
			source:    func(context.Context) (serverListing, error) { return serverListing{}, nil },
			wantRooms: map[string][]string{"us-west": {}, "eu-central-1": {}}},
		{name: "several games on a server, one closed",
			source: func(context.Context) (serverListing, error) {
				return serverListing{Records: []gameinstance.GameServer{usWest, closed}}, nil
			},
			wantRooms: map[string][]string{"eu-central-1": {},
				"us-west": {"127.0.0.1:7001 3/4 true  gi-1,gi-2,gi-3", "127.0.0.1:7002 1/4 false CallbackFailures gi-4"}}},
		{name: "a region only the table knows",
			source: func(context.Context) (serverListing, error) {
				return serverListing{Records: []gameinstance.GameServer{elsewhere}}, nil
			},
			wantRooms: map[string][]string{"us-west": {}, "eu-central-1": {}, "ap-south-1": {"127.0.0.1:7100 0/2 true  "}}},
		{name: "partly read",
			source: func(context.Context) (serverListing, error) {
				return serverListing{Records: []gameinstance.GameServer{usWest}, More: true, Unreadable: 2}, nil
			},
			wantRooms: map[string][]string{"eu-central-1": {}, "us-west": {"127.0.0.1:7001 3/4 true  gi-1,gi-2,gi-3"}},
			wantProblems: []string{"game servers: 2 items are not game server records",
				fmt.Sprintf("game servers: only the first %d records are shown", maxServersScanned)}},
		{name: "the table fails",
			source:       func(context.Context) (serverListing, error) { return serverListing{}, errors.New("table gone") },
			wantRooms:    map[string][]string{"us-west": {}, "eu-central-1": {}},
			wantProblems: []string{"game servers: table gone"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &fakeAPI{regions: `{"regions":[]}`}
			d := newDash(t, Sources{APIURL: api.start(t), GameServers: tt.source,
				Instances: func(context.Context) (instanceListing, error) { return instanceListing{}, nil },
				Served:    []Served{{Region: "us-west", Allocator: "us"}, {Region: "eu-central-1", Allocator: "eu"}}})
			rec, _ := do(t, d, http.MethodGet, "/api/state", "")
			if strings.Contains(rec.Body.String(), callbackToken) || strings.Contains(rec.Body.String(), "/sessions") {
				t.Fatal("the state shows the callback token or URL") // not the body: it would print the token
			}
			var st struct {
				Regions []struct {
					Region      string            `json:"region"`
					RoomServers *[]roomServerView `json:"roomServers"` // a pointer: null is no list
				} `json:"regions"`
				Problems []string `json:"problems"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			for _, r := range st.Regions {
				if r.RoomServers == nil {
					t.Fatalf("%s: roomServers is null, want a list", r.Region)
				}
				got[r.Region] = []string{}
				for _, g := range *r.RoomServers {
					got[r.Region] = append(got[r.Region], fmt.Sprintf("%s %d/%d %v %s %s", g.Address, g.InUse, g.Capacity, g.Accepting,
						g.ClosedReason, strings.Join(g.Sessions, ",")))
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.wantRooms) {
				t.Errorf("rooms by region:\n got %v\nwant %v", got, tt.wantRooms)
			}
			if !slices.Equal(st.Problems, tt.wantProblems) {
				t.Errorf("problems %q, want %q", st.Problems, tt.wantProblems)
			}
		})
	}
}

// The callback token is a credential: what the dashboard serves never
// holds it, read from the table as make dev reads it.
func TestStateNeverShowsTheCallbackToken(t *testing.T) {
	db := &pages{items: [][]map[string]types.AttributeValue{{
		serverItem("127.0.0.1:7001", "us-west", 4, true, "gi-1", "gi-2"),
		serverItem("127.0.0.1:7002", "us-west", 2, false, "gi-3"),
	}}}
	api := &fakeAPI{regions: `{"regions":[]}`}
	d := newDash(t, Sources{APIURL: api.start(t),
		GameServers: func(ctx context.Context) (serverListing, error) {
			db.calls = 0 // every poll reads the table anew
			return ScanGameServers(ctx, db, "GameServersTable")
		}})
	for _, path := range []string{"/api/state", "/", "/app.js"} {
		rec, _ := do(t, d, http.MethodGet, path, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, rec.Code)
		}
		if body := rec.Body.String(); strings.Contains(body, callbackToken) || strings.Contains(body, "cb-token") {
			t.Errorf("GET %s shows the callback token", path)
		}
	}
	rec, _ := do(t, d, http.MethodGet, "/api/state", "")
	if !strings.Contains(rec.Body.String(), `"sessions":["gi-1","gi-2"]`) {
		t.Error("the state does not show the sessions of the servers it read")
	}
}
