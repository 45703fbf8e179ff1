package stack

import (
	"cmp"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// twoAllocators is Defaults()' installation as StartComponents would leave
// it, without starting anything.
func twoAllocators(t *testing.T) *Components {
	t.Helper()
	gf := Defaults().GameFabric
	c := &Components{Ping: &PingService{URL: "http://127.0.0.1:7500/ping", SecretARN: "arn:ping", Tokens: gf.Ping.Tokens}}
	for i, ac := range gf.Allocators {
		c.Allocators = append(c.Allocators, &Allocator{AllocatorConfig: ac,
			URL: []string{"http://127.0.0.1:7400", "http://127.0.0.1:7401"}[i], SecretARN: "arn:" + ac.Name})
	}
	return c
}

// repoComponents is the stack's components for template.yaml as
// StartComponents would name them, without starting anything.
func repoComponents(t *testing.T) *Components {
	t.Helper()
	c := twoAllocators(t)
	var err error
	if c.Template, err = LoadTemplate("../.."); err != nil {
		t.Fatal(err)
	}
	c.Tables = map[string]string{}
	for _, id := range c.Template.LogicalIDs("AWS::DynamoDB::Table") {
		c.Tables[id] = id
	}
	// What StartComponents creates in moto.
	buses, err := c.Template.EventBuses()
	if err != nil {
		t.Fatal(err)
	}
	c.EventBuses = map[string]string{}
	for _, b := range buses {
		c.EventBuses[b.LogicalID] = b.Name
	}
	queues, err := c.Template.Queues()
	if err != nil {
		t.Fatal(err)
	}
	c.Queues, c.QueueARNs = map[string]string{}, map[string]string{}
	for _, q := range queues {
		c.Queues[q.LogicalID] = "http://127.0.0.1:5000/123456789012/" + q.LogicalID
		c.QueueARNs[q.LogicalID] = "arn:aws:sqs:us-east-1:123456789012:" + q.LogicalID
	}
	secrets, err := c.Template.Secrets(Defaults().Parameters)
	if err != nil {
		t.Fatal(err)
	}
	c.Secrets = map[string]GeneratedSecret{}
	for _, s := range secrets {
		c.Secrets[s.LogicalID] = GeneratedSecret{ARN: "arn:aws:secretsmanager:us-east-1:123456789012:secret:local/" + s.LogicalID, Key: s.Key}
	}
	return c
}

func TestAllocatorFor(t *testing.T) {
	c := twoAllocators(t)
	for _, tc := range []struct{ region, allocator, regionString string }{
		{"us-west", "us", "dev-us-west"},
		{"eu-central-1", "eu", "dev-eu-central-1"},
		// Listed nowhere: the first Allocator, under the Region's own name.
		{"ap-south", "us", "ap-south"},
	} {
		a, s := c.AllocatorFor(tc.region)
		if a.Name != tc.allocator || s != tc.regionString {
			t.Errorf("AllocatorFor(%s) = %s, %q; want %s, %q", tc.region, a.Name, s, tc.allocator, tc.regionString)
		}
	}
}

// Game servers get what GameFabric injects from their Region's Allocator:
// its Registry URL, its latest registry token and its region string.
func TestFleetEnv(t *testing.T) {
	c := twoAllocators(t)
	for region, want := range map[string][]string{
		"us-west": {"ALLOC_URL=http://127.0.0.1:7400/allocator/us/servers", "ALLOC_TOKEN=dev-us-registry-token",
			"ALLOC_REGION=dev-us-west", "ALLOC_PRIORITY=0"},
		"eu-central-1": {"ALLOC_URL=http://127.0.0.1:7401/allocator/eu/servers", "ALLOC_TOKEN=dev-eu-registry-token",
			"ALLOC_REGION=dev-eu-central-1", "ALLOC_PRIORITY=0"},
		"ap-south": {"ALLOC_URL=http://127.0.0.1:7400/allocator/us/servers", "ALLOC_TOKEN=dev-us-registry-token",
			"ALLOC_REGION=ap-south", "ALLOC_PRIORITY=0"},
	} {
		if got := c.FleetEnv(region); !slices.Equal(got, want) {
			t.Errorf("FleetEnv(%s) = %v, want %v", region, got, want)
		}
	}
}

func TestGameFabricRefs(t *testing.T) {
	c := twoAllocators(t)
	refs := c.gameFabricRefs()
	var allocators map[string]map[string]string
	if err := json.Unmarshal([]byte(refs["Allocators"]), &allocators); err != nil {
		t.Fatalf("Allocators = %q: %v", refs["Allocators"], err)
	}
	wantAllocators := map[string]map[string]string{
		"us-west":      {"url": "http://127.0.0.1:7400/allocator/us/allocate", "region": "dev-us-west", "tokenSecretId": "arn:us"},
		"eu-central-1": {"url": "http://127.0.0.1:7401/allocator/eu/allocate", "region": "dev-eu-central-1", "tokenSecretId": "arn:eu"},
	}
	if !reflect.DeepEqual(allocators, wantAllocators) {
		t.Errorf("Allocators = %+v, want %+v", allocators, wantAllocators)
	}
	delete(refs, "Allocators")
	want := map[string]string{
		"GameFabricUrl":            "http://127.0.0.1:7400",
		"GameFabricAllocatePath":   "allocator/us/allocate",
		"AllocatorTokenSecretArn":  "arn:us",
		"AllocatorTokenSecretArns": "arn:eu",
		"GameFabricPingUrl":        "http://127.0.0.1:7500/ping",
		"PingTokenSecretArn":       "arn:ping",
	}
	if !reflect.DeepEqual(refs, want) {
		t.Errorf("refs = %v, want %v", refs, want)
	}

	// One Allocator listing no Region (the bench's stand-in setup): every
	// region goes to GameFabricUrl, and the parameter stays at its default.
	c.Allocators = c.Allocators[:1]
	c.Allocators[0].Regions = nil
	if refs := c.gameFabricRefs(); refs["Allocators"] != "" || refs["AllocatorTokenSecretArns"] != "" {
		t.Errorf("one Allocator without Regions: Allocators = %q, AllocatorTokenSecretArns = %q", refs["Allocators"], refs["AllocatorTokenSecretArns"])
	}
}

// template.yaml resolves with the stack's refs, whether or not it declares
// every parameter they name yet, and points the functions at the emulated
// installation.
func TestRefsResolveTheRepoTemplate(t *testing.T) {
	c := repoComponents(t)
	refs := c.Refs(Defaults(), "http://127.0.0.1:3000")
	for _, fn := range c.Template.LogicalIDs("AWS::Serverless::Function") {
		if _, err := c.FunctionEnv(fn, refs); err != nil {
			t.Errorf("%s: %v", fn, err)
		}
	}
	allocate := envOf(t, c, "AllocateFunction", refs)
	if allocate["GAMEFABRIC_URL"] != "http://127.0.0.1:7400" || allocate["ALLOCATOR_TOKEN_SECRET_ID"] != "arn:us" ||
		allocate["GAMEFABRIC_ALLOCATORS"] != c.AllocatorsParameter() {
		t.Errorf("AllocateFunction: GAMEFABRIC_URL %q, ALLOCATOR_TOKEN_SECRET_ID %q, GAMEFABRIC_ALLOCATORS %q",
			allocate["GAMEFABRIC_URL"], allocate["ALLOCATOR_TOKEN_SECRET_ID"], allocate["GAMEFABRIC_ALLOCATORS"])
	}
	// The allocate function hands queued placements to the worker, which
	// puts them back: both on the local queue.
	for _, fn := range []string{"AllocateFunction", "PlacementFunction"} {
		if got := envOf(t, c, fn, refs)["PLACEMENT_QUEUE_URL"]; got != c.Queues["PlacementQueue"] {
			t.Errorf("%s: PLACEMENT_QUEUE_URL %q, want the local PlacementQueue %q", fn, got, c.Queues["PlacementQueue"])
		}
	}
	if ping := envOf(t, c, "PingRefreshFunction", refs); ping["PING_TOKEN_SECRET_ID"] != "arn:ping" {
		t.Errorf("PingRefreshFunction: PING_TOKEN_SECRET_ID %q, want the Ping Service's own secret", ping["PING_TOKEN_SECRET_ID"])
	}
	testGameServerEndpoints(t, c)
}

// Game servers link back through LinkBackFunction's function URL by
// default (the template's BACKEND_ADDRESS, on functionUrls.port), through
// the API with GameServerEndpoint HttpApi (the stack passes its URL as
// BackendAddress, as an operator must), and to an address dev.yaml gives.
func testGameServerEndpoints(t *testing.T, c *Components) {
	t.Helper()
	for _, tc := range []struct {
		params        map[string]string
		backend, mode string
	}{
		{nil, "http://127.0.0.1:3001/", ""},
		{map[string]string{"GameServerEndpoint": "FunctionUrl"}, "http://127.0.0.1:3001/", "FunctionUrl"},
		{map[string]string{"GameServerEndpoint": "HttpApi"}, "http://127.0.0.1:3000", "HttpApi"},
		{map[string]string{"GameServerEndpoint": "HttpApi", "BackendAddress": "https://games.example"}, "https://games.example", "HttpApi"},
	} {
		cfg := Defaults()
		for k, v := range tc.params {
			cfg.Parameters[k] = v
		}
		refs := c.Refs(cfg, "http://127.0.0.1:3000")
		for _, fn := range []string{"AllocateFunction", "PlacementFunction", "MatchmakingFunction"} {
			if got := envOf(t, c, fn, refs)["BACKEND_ADDRESS"]; got != tc.backend {
				t.Errorf("%v: %s's BACKEND_ADDRESS %q, want %q", tc.params, fn, got, tc.backend)
			}
		}
		if got, want := envOf(t, c, "LinkBackFunction", refs)["GAME_SERVER_ENDPOINT"], cmp.Or(tc.mode, "FunctionUrl"); got != want {
			t.Errorf("%v: LinkBackFunction's GAME_SERVER_ENDPOINT %q, want %q", tc.params, got, want)
		}
	}
}

func envOf(t *testing.T, c *Components, fn string, refs map[string]string) map[string]string {
	t.Helper()
	list, err := c.FunctionEnv(fn, refs)
	if err != nil {
		t.Fatalf("%s: %v", fn, err)
	}
	env := map[string]string{}
	for _, kv := range list {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}
