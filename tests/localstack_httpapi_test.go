//go:build integration

package tests

import (
	"context"
	"net/http"
	"testing"
	"time"

	localstack "github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/local/template"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
)

// With GameServerEndpoint HttpApi the game servers' three routes are the
// HTTP API's, as they were before the function URL: they come from the
// HttpApi's DefinitionBody, the stack passes the API's URL as
// BackendAddress (as an operator must), no function URL is served, and the
// sample server links, heartbeats and ends through the API.
func TestLocalStackGameServersOnTheHttpApi(t *testing.T) {
	cfg := localstack.Defaults()
	cfg.AnyFreePorts()
	cfg.Parameters["GameServerEndpoint"] = "HttpApi"
	cfg.Fleet.Stagger = 100 * time.Millisecond
	cfg.Fleet.Regions = map[string][]localstack.FleetProcess{"us-west": {{Command: localstack.SampleServer, ConcurrentExecutions: 1,
		Env: []string{"ALLOC_ATTRIBUTES=env=prag,armadaset=sample-game-armada-set", "HEARTBEAT_INTERVAL=300ms", "MAX_GAME_LENGTH=2m"}}}}
	workDir := t.TempDir()
	s, _, seen := startLocalStackSeen(t, cfg, workDir)
	// GameLift's placement API keeps its own (GameLiftApi in local/dev.yaml).
	if len(s.FunctionURLs) != 1 || s.FunctionURLs[0].FunctionLogicalID != "GameLiftApiFunction" || s.GameServerURL != s.APIURL {
		t.Fatalf("function URLs %+v, game servers at %q; want GameLiftApiFunction's alone, and the API %q", s.FunctionURLs, s.GameServerURL, s.APIURL)
	}
	for _, call := range []string{"link", "heartbeat", "end"} {
		want := template.Route{FunctionLogicalID: "LinkBackFunction", Method: "POST", Path: "/v1/game-instances/{gameInstanceId}/" + call, PayloadFormatVersion: "2.0"}
		if !hasRoute(s.Routes, want) {
			t.Errorf("the API has no route %s %s -> LinkBackFunction: %+v", want.Method, want.Path, s.Routes)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	testkit.WaitFor(t, 30*time.Second, "a us-west game server registered", func() bool {
		return len(registeredAt(s.Allocators[0], "dev-us-west")) == 1
	})
	backend := backendClient(t, s)
	status, a, err := allocateOnce(t, backend, allocclient.AllocateRequest{GameInstanceID: "gi-api-1", DesiredRegion: "us-west"})
	if status != http.StatusCreated || a.Server == nil {
		t.Fatalf("allocate: %d %+v %v", status, a, err)
	}
	if _, payload := payloadOf(t, workDir, "us-west"); payload["pragmaBackendAddress"] != s.APIURL {
		t.Fatalf("pragmaBackendAddress %q, want the API %q", payload["pragmaBackendAddress"], s.APIURL)
	}
	get := func() *allocclient.Allocation {
		if got, err := backend.Get(ctx, "gi-api-1"); err == nil {
			return got
		}
		return &allocclient.Allocation{}
	}
	// Behind the HTTP API a heartbeat reads first and is recorded only
	// once due (a period past the initial delay): the API's answers, not
	// the record, show that the server heartbeats.
	testkit.WaitFor(t, 15*time.Second, "Linked, and a heartbeat answered through the API", func() bool {
		return get().State == allocclient.StateLinked &&
			seen.answered(s.APIURL, "/v1/game-instances/gi-api-1/heartbeat", http.StatusOK) > 0
	})
	endGame(t, a.Server.Address)
	testkit.WaitFor(t, 15*time.Second, "Ended (IWON)", func() bool { return get().State == allocclient.StateEnded })
	for _, call := range []string{"link", "heartbeat", "end"} {
		if n := seen.answered(s.APIURL, "/v1/game-instances/gi-api-1/"+call, http.StatusOK); n < 1 {
			t.Errorf("%s through the API: %d calls answered 200", call, n)
		}
	}
}

// hasRoute reports whether routes has want, whatever its event's name.
func hasRoute(routes []template.Route, want template.Route) bool {
	for _, r := range routes {
		r.EventName = ""
		if r == want {
			return true
		}
	}
	return false
}
