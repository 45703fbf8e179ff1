package stack

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// local/dev.yaml documents the defaults; it must parse and agree with them.
func TestDevYAMLIsTheDefaults(t *testing.T) {
	got, err := LoadConfig("../dev.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Defaults()
	// The file also sets a maximum game length for the dev fleet.
	for region, procs := range got.Fleet.Regions {
		for i := range procs {
			procs[i].Env = procs[i].Env[:1]
		}
		got.Fleet.Regions[region] = procs
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("local/dev.yaml = %+v\nDefaults() = %+v", got, want)
	}
}

func TestLoadConfigRejectsMistakes(t *testing.T) {
	tests := map[string]string{
		"unknown key":             "api:\n  prot: 3000\n",
		"no allocator token":      "gamefabric:\n  allocatorTokens: []\n",
		"zero concurrency":        "api:\n  concurrency: 0\n",
		"process without command": "fleet:\n  regions:\n    us-west:\n      - concurrentExecutions: 1\n",
	}
	for name, body := range tests {
		path := filepath.Join(t.TempDir(), "dev.yaml")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadConfig(path); err == nil {
			t.Errorf("%s: accepted", name)
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
