package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/dashboard"
	"github.com/gamefabric-alloc/allocsvc/local/stack"
)

// fakeDashboard stands in for make dev's dashboard: POST /api/match plays
// a match whose instance and events then appear in GET /api/state, one
// step per read, as MatchmakingFunction and EventsFunction would make them.
type fakeDashboard struct {
	mu     sync.Mutex
	played []map[string]any
	steps  []string // the states a read shows, in turn
	reads  int
	fail   bool // the match ends Failed instead
	stall  bool // the match never shows
}

const matchID = "0b1f4c3e-7d7a-4c1e-9a57-3f2d1e6c9a01"

func (f *fakeDashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/api/match":
		var body map[string]any
		raw, _ := io.ReadAll(r.Body)
		if r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(raw, &body) != nil {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message":"the body must be application/json"}`)
			return
		}
		f.played = append(f.played, body)
		fmt.Fprintf(w, `{"ok":true,"gameInstanceId":%q,"message":"match %s of 4 players is on the default bus"}`, matchID, matchID)
	case "/api/state":
		f.reads++
		fmt.Fprint(w, f.state())
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// state is the read's view: nothing yet, then Allocated with its events,
// then the match published again (or its failure).
func (f *fakeDashboard) state() string {
	inst := `{"gameInstanceId":"` + matchID + `","state":"Allocated","region":"eu-central-1","server":{"address":"127.0.0.1:7010"}}`
	allocated := `{"seq":7,"detailType":"GameServerAllocated","gameInstanceId":"` + matchID + `","line":"event GameServerAllocated ` + matchID + ` Allocating → Allocated (k)"}`
	other := `{"seq":6,"detailType":"GameServerLinked","gameInstanceId":"gi-1","line":"event GameServerLinked gi-1"}`
	switch {
	case f.reads == 1 || f.stall:
		return `{"instances":[],"events":[` + other + `]}`
	case f.fail:
		return `{"instances":[{"gameInstanceId":"` + matchID + `","state":"Failed","error":{"code":"NO_CAPACITY","message":"no region had a game server"}}],"events":[]}`
	case f.reads == 2:
		return `{"instances":[` + inst + `],"events":[` + allocated + `,` + other + `]}`
	}
	again := `{"seq":8,"detailType":"GameFabricMatchmakingSucceeded","gameInstanceId":"` + matchID + `","address":"127.0.0.1:7011","line":"event GameFabricMatchmakingSucceeded match ` + matchID + ` at 127.0.0.1:7011 (k2)"}`
	return `{"instances":[` + inst + `],"events":[` + again + `,` + allocated + `,` + other + `]}`
}

// runningDev writes the state of a make dev whose dashboard is url; its
// other endpoints answer too (ReadLiveState dials them).
func runningDev(t *testing.T, url string) string {
	path := filepath.Join(t.TempDir(), "stack.json")
	if err := stack.WriteState(path, stack.State{APIURL: url, DynamoDB: url, SecretsManager: url, GameFabric: []string{url}, Dashboard: url + "/"}); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMatchFollowsTheMatchUntilItIsPublishedAgain(t *testing.T) {
	f := &fakeDashboard{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	near := `{"region":"us-west"}`
	if err := run(ctx, &out, runningDev(t, srv.URL), dashboard.MatchForm{Players: 6, Near: "eu-central-1", CustomEventData: &near}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := []string{
		"match " + matchID + " of 4 players is on the default bus",
		"game instance " + matchID + " is Allocated in eu-central-1 on game server 127.0.0.1:7010",
		"event GameServerAllocated " + matchID + " Allocating → Allocated (k)",
		"event GameFabricMatchmakingSucceeded match " + matchID + " at 127.0.0.1:7011 (k2)",
		"make play ID=" + matchID + " ends its game, as a player would.",
	}
	if got := strings.Split(strings.TrimSpace(out.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), strings.Join(want, "\n"))
	}
	if len(f.played) != 1 || f.played[0]["players"] != float64(6) || f.played[0]["near"] != "eu-central-1" || f.played[0]["customEventData"] != near {
		t.Errorf("the dashboard was asked %v", f.played)
	}
}

func TestMatchSaysWhatWentWrong(t *testing.T) {
	f := &fakeDashboard{fail: true}
	srv := httptest.NewServer(f)
	defer srv.Close()
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := run(ctx, &out, runningDev(t, srv.URL), dashboard.MatchForm{Players: 4})
	if err == nil || !strings.Contains(err.Error(), "was not placed: NO_CAPACITY") || !strings.Contains(out.String(), "no region had a game server") {
		t.Errorf("a failed match: %v\n%s", err, out.String())
	}

	// A match followed past the timeout says where it stands.
	f = &fakeDashboard{stall: true}
	srv2 := httptest.NewServer(f)
	defer srv2.Close()
	short, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	if err := run(short, io.Discard, runningDev(t, srv2.URL), dashboard.MatchForm{Players: 4}); err == nil || !strings.Contains(err.Error(), "stopped following match") {
		t.Errorf("past the timeout: %v", err)
	}

	if err := run(ctx, io.Discard, filepath.Join(t.TempDir(), "none.json"), dashboard.MatchForm{}); err == nil || !strings.Contains(err.Error(), "make dev is not running") {
		t.Errorf("without make dev: %v", err)
	}
	old := runningDev(t, srv.URL)
	if err := stack.WriteState(old, stack.State{APIURL: srv.URL, DynamoDB: srv.URL, SecretsManager: srv.URL}); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, io.Discard, old, dashboard.MatchForm{}); err == nil || !strings.Contains(err.Error(), "predates make match") {
		t.Errorf("an older make dev: %v", err)
	}
}
