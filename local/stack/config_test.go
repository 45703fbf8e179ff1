package stack

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// local/dev.yaml documents the defaults; it must parse and agree with them.
func TestDevYAMLIsTheDefaults(t *testing.T) {
	got, err := LoadConfig("../dev.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Defaults()
	if err := want.validate(); err != nil {
		t.Fatalf("Defaults() is invalid: %v", err)
	}
	// The file also sets a maximum game length for the dev fleet.
	for region, procs := range got.Fleet.Regions {
		for i := range procs {
			procs[i].Env = slices.DeleteFunc(procs[i].Env, func(e string) bool { return strings.HasPrefix(e, "MAX_GAME_LENGTH=") })
			if len(procs[i].Env) == 0 {
				procs[i].Env = nil
			}
		}
		got.Fleet.Regions[region] = procs
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("local/dev.yaml = %+v\nDefaults() = %+v", got, want)
	}
}

func TestLoadConfigRejectsMistakes(t *testing.T) {
	// A valid two-Allocator file the cases below extend.
	const ok = `gamefabric:
  allocators:
    - name: a
      allocatorTokens: [t]
      registryTokens: [r]
      regions: {us-west: x-us}
    - name: b
      allocatorTokens: [t]
      registryTokens: [r]
      regions: {eu-central-1: x-eu}
`
	tests := map[string]struct{ body, want string }{
		"unknown key":                    {"api:\n  prot: 3000\n", "prot"},
		"the old one-allocator keys":     {"gamefabric:\n  port: 7400\n", "port"},
		"zero concurrency":               {"api:\n  concurrency: 0\n", "api.concurrency"},
		"process without command":        {"fleet:\n  regions:\n    us-west:\n      - concurrentExecutions: 1\n", "fleet.regions.us-west[0]"},
		"one room":                       {"fleet:\n  regions:\n    us-west:\n      - command: sampleserver\n        rooms: 1\n", "fleet.regions.us-west[0].rooms must be 0 (dedicated) or 2 to 256, got 1"},
		"too many rooms":                 {"fleet:\n  regions:\n    eu-central-1:\n      - command: sampleserver\n        rooms: 257\n", "fleet.regions.eu-central-1[0].rooms"},
		"rooms not a number":             {"fleet:\n  regions:\n    us-west:\n      - command: sampleserver\n        rooms: four\n", "rooms"},
		"no allocator":                   {"gamefabric:\n  allocators: []\n", "at least one Allocator"},
		"no allocator token":             {strings.Replace(ok, "allocatorTokens: [t]", "allocatorTokens: []", 1), "allocators[0].allocatorTokens"},
		"empty registry token":           {strings.Replace(ok, "registryTokens: [r]", `registryTokens: [""]`, 1), "allocators[0].registryTokens"},
		"no ping token":                  {ok + "  ping:\n    tokens: []\n", "gamefabric.ping.tokens"},
		"name not for a URL":             {strings.Replace(ok, "name: a", "name: A/1", 1), "allocators[0].name"},
		"same name twice":                {strings.Replace(ok, "name: b", "name: a", 1), `"a" is used twice`},
		"same port twice":                {ok + "  ping:\n    port: 3000\n", "api.port and gamefabric.ping.port"},
		"dashboard on the API's port":    {"dashboard:\n  port: 3000\n", "api.port and dashboard.port"},
		"function URL on the API's port": {"functionUrls:\n  port: 3000\n", "api.port and functionUrls.port"},
		"unknown game-server endpoint":   {"parameters:\n  GameServerEndpoint: Both\n", "parameters.GameServerEndpoint must be FunctionUrl or HttpApi"},
		"port out of range":              {strings.Replace(ok, "name: b\n", "name: b\n      port: 70000\n", 1), "allocators[1].port"},
		"negative qps":                   {strings.Replace(ok, "name: b\n", "name: b\n      qps: -1\n", 1), "allocators[1]: qps"},
		"unknown callbackAuth":           {strings.Replace(ok, "name: b\n", "name: b\n      callbackAuth: basic\n", 1), "callbackAuth"},
		"region on two allocators":       {strings.Replace(ok, "eu-central-1: x-eu", "us-west: x-eu", 1), "already attached to Allocator a"},
		"uppercase region name":          {strings.Replace(ok, "us-west: x-us", "US-West: x-us", 1), `"US-West" must be at most 64 lowercase`},
		"empty region string":            {strings.Replace(ok, "us-west: x-us", `us-west: ""`, 1), "regions.us-west"},
		"one string for two regions":     {strings.Replace(ok, "{us-west: x-us}", "{us-west: x-us, us-east: x-us}", 1), `both map to region string "x-us"`},
		"unlisted region on a taken string": {strings.Replace(ok, "us-west: x-us", "us-west: eu-west", 1) +
			"fleet:\n  regions:\n    eu-west:\n      - command: sampleserver\n", "fleet.regions.eu-west"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "dev.yaml")
			if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadConfig(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one naming %q", err, tc.want)
			}
		})
	}
	path := filepath.Join(t.TempDir(), "dev.yaml")
	if err := os.WriteFile(path, []byte(ok), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(path); err != nil {
		t.Fatalf("the base of the cases is rejected: %v", err)
	}
}

// rooms becomes the process's ROOMS; the entry's own env still wins.
func TestProcessEnv(t *testing.T) {
	tests := []struct {
		name string
		p    FleetProcess
		want []string
	}{
		{"dedicated", FleetProcess{Env: []string{"A=1"}}, []string{"A=1"}},
		{"rooms", FleetProcess{Rooms: 4, Env: []string{"A=1"}}, []string{"ROOMS=4", "A=1"}},
		{"env wins, coming last", FleetProcess{Rooms: 4, Env: []string{"ROOMS=2"}}, []string{"ROOMS=4", "ROOMS=2"}},
	}
	for _, tc := range tests {
		if got := tc.p.ProcessEnv(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// dev.yaml's us-west servers offer rooms; eu-central-1's are dedicated.
	c, err := LoadConfig("../dev.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if us, eu := c.Fleet.Regions["us-west"][0], c.Fleet.Regions["eu-central-1"][0]; us.Rooms != 4 || eu.Rooms != 0 ||
		!slices.Contains(us.ProcessEnv(), "ROOMS=4") || slices.ContainsFunc(eu.ProcessEnv(), func(e string) bool { return strings.HasPrefix(e, "ROOMS=") }) {
		t.Fatalf("us-west %+v, eu-central-1 %+v", us, eu)
	}
}

// Every problem is named at once.
func TestValidateNamesEveryProblem(t *testing.T) {
	c := Defaults()
	c.API.Concurrency = 0
	c.GameFabric.Allocators[1].Name = "us"
	c.GameFabric.Ping.Tokens = nil
	err := c.validate()
	for _, want := range []string{"api.concurrency", `"us" is used twice`, "gamefabric.ping.tokens"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error = %v, want it to name %q", err, want)
		}
	}
}

func TestFunctionDir(t *testing.T) {
	for id, want := range map[string]string{"AllocateFunction": "allocate", "PingRefreshFunction": "pingrefresh", "HealthSweepFunction": "healthsweep"} {
		if got := FunctionDir(id); got != want {
			t.Errorf("FunctionDir(%s) = %s", id, got)
		}
	}
	// Every function in template.yaml has its folder.
	tpl, err := LoadTemplate("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range tpl.LogicalIDs("AWS::Serverless::Function") {
		if _, err := os.Stat(filepath.Join("../../functions", FunctionDir(id), "main.go")); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
}
