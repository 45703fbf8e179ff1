package main

import (
	"strings"
	"testing"

	"github.com/gamefabric-alloc/allocsvc/local/agonesemu"
	"github.com/gamefabric-alloc/allocsvc/local/stack"
)

// The banner is how a developer finds the dashboard: one line that starts
// with "Dashboard" and carries its URL, and the ways to end a game.
func TestBannerNamesTheDashboard(t *testing.T) {
	tpl, err := stack.LoadTemplate("../../..")
	if err != nil {
		t.Fatal(err)
	}
	cfg := stack.Defaults()
	var allocators []*stack.Allocator
	for _, ac := range cfg.GameFabric.Allocators {
		allocators = append(allocators, &stack.Allocator{AllocatorConfig: ac, URL: "http://127.0.0.1:7400", SecretARN: "arn:secret:" + ac.Name})
	}
	urls, err := tpl.FunctionURLs(cfg.Parameters)
	if err != nil || len(urls) != 2 {
		t.Fatalf("function URLs %v, %v", urls, err)
	}
	s := &stack.Stack{APIURL: "http://127.0.0.1:3000", GameServerURL: "http://127.0.0.1:3001",
		FunctionURLs: []stack.FunctionURL{{FunctionURL: urls[0], URL: "http://127.0.0.1:3001/"}, {FunctionURL: urls[1], URL: "http://127.0.0.1:3002/"}},
		Components: &stack.Components{
			Template: tpl, Allocators: allocators, Ping: &stack.PingService{URL: "http://127.0.0.1:7500/ping"},
			Agones:   &stack.Agones{AgonesConfig: cfg.Agones, Allocator: &agonesemu.Allocator{URL: "https://127.0.0.1:7402"}, SecretARN: "arn:secret:agones"},
			DynamoDB: "http://127.0.0.1:8000", Tables: map[string]string{"GameInstancesTable": "GameInstancesTable"},
			Secrets: map[string]stack.GeneratedSecret{"GameLiftApiKeys": {ARN: "arn:keys", Key: "GFGAMELIFTKEY1", Value: "s3cr3t"}},
		}}
	out := banner(s, cfg, "http://127.0.0.1:8089/")
	var dashboardLines []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Dashboard") {
			dashboardLines = append(dashboardLines, line)
		}
	}
	if len(dashboardLines) != 1 || !strings.Contains(dashboardLines[0], " http://127.0.0.1:8089/ ") {
		t.Fatalf("lines starting with Dashboard: %q\nbanner:\n%s", dashboardLines, out)
	}
	// make dev's us-west servers host several games (local/dev.yaml's
	// defaults): the banner says so, and how to see it.
	// Where the game servers link back: LinkBackFunction's function URL.
	for _, want := range []string{"HTTP API            http://127.0.0.1:3000", "make play ID=gi-1", "End on the dashboard",
		"function URL        http://127.0.0.1:3001/   (LinkBackFunctionUrl: every path and method -> LinkBackFunction; AuthType NONE)",
		"game servers        link back to http://127.0.0.1:3001 ",
		"us-west: 2 (Allocator us, 4 rooms each)", "Servers in eu-baremetal, us-west host several games at once",
		// The Agones cluster: its allocator service, its Fleet, its client secret.
		"Agones allocator    https://127.0.0.1:7402/gameserverallocation   (mutual TLS, a CA made for this run) serves eu-baremetal, rooms on the Counter rooms",
		"eu-baremetal: 2 (Agones, 4 rooms each)", "Agones client     arn:secret:agones",
		"GameLift API        http://127.0.0.1:3002/", "key pair          GFGAMELIFTKEY1 / s3cr3t", "make gamelift-place"} {
		if !strings.Contains(out, want) {
			t.Errorf("the banner lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "make match") {
		t.Errorf("the banner offers make match without MatchmakingRule:\n%s", out)
	}
	// FlexMatch played locally: the rule, the GameLift stand-in, make match.
	s.Rules, err = tpl.EventRules(cfg.Parameters)
	if err != nil || len(s.Rules) != 1 {
		t.Fatalf("the local parameters make %d rules (%v), want MatchmakingRule", len(s.Rules), err)
	}
	s.GameLiftURL = "http://127.0.0.1:7600"
	out = banner(s, cfg, "http://127.0.0.1:8089/")
	for _, want := range []string{"rule                MatchmakingRule on the default bus -> MatchmakingFunction",
		"GameLift            http://127.0.0.1:7600", "make match PLAYERS=4"} {
		if !strings.Contains(out, want) {
			t.Errorf("the banner lacks %q:\n%s", want, out)
		}
	}
	// How to watch a placement wait, and the drains make dev runs.
	if err := cfg.AddDrains("eu-central-1:20s/1m"); err != nil {
		t.Fatal(err)
	}
	out = banner(s, cfg, "http://127.0.0.1:8089/")
	for _, want := range []string{"drain               eu-central-1 runs dry for 20s every 1m0s",
		"Drain 20 s on the dashboard's eu-central-1 row (or make dev DRAIN=eu-central-1:20s/1m)", `"queueTimeoutSeconds":60`} {
		if !strings.Contains(out, want) {
			t.Errorf("the banner lacks %q:\n%s", want, out)
		}
	}
}
