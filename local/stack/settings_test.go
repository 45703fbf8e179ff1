package stack

import (
	"os"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/gamefabric-alloc/allocsvc/shared/config"
)

// loaders are the functions' configuration readers, as their main.go call them.
var loaders = map[string]func(func(string) string) (any, error){
	"AllocateFunction":    func(g func(string) string) (any, error) { return config.LoadAllocate(g) },
	"PlacementFunction":   func(g func(string) string) (any, error) { return config.LoadAllocate(g) },
	"MatchmakingFunction": func(g func(string) string) (any, error) { return config.LoadMatchmaking(g) },
	"LinkBackFunction":    func(g func(string) string) (any, error) { return config.LoadLifecycle(g) },
	"HealthSweepFunction": func(g func(string) string) (any, error) { return config.LoadLifecycle(g) },
	"EventsFunction":      func(g func(string) string) (any, error) { return config.LoadEvents(g) },
	"RegionsFunction":     func(g func(string) string) (any, error) { return config.LoadRegions(g) },
	"PingRefreshFunction": func(g func(string) string) (any, error) { return config.LoadPingRefresh(g) },
	"GameLiftApiFunction": func(g func(string) string) (any, error) { return config.LoadGameLiftAPI(g) },
}

// TestTemplateDefaultsAreTheConfigurations: a deployment without overrides
// behaves as the code's defaults say. For every template parameter with a
// Default and every function variable that is that parameter as it is
// (found by giving the parameter a probe value), the function's
// configuration read with the template's default must equal the one read
// without the variable, where shared/config applies shared/defaults. So
// a new setting needs no row here, and a default changed on one side only
// fails.
func TestTemplateDefaultsAreTheConfigurations(t *testing.T) {
	c := repoComponents(t)
	raw, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Parameters map[string]struct {
			Default *string `yaml:"Default"`
		} `yaml:"Parameters"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	const probe = "probe-value-7f3a"
	checked := 0
	for _, fn := range c.Template.LogicalIDs("AWS::Serverless::Function") {
		load, ok := loaders[fn]
		if !ok {
			t.Errorf("%s has no configuration reader in this test: add its config.Load… to loaders", fn)
			continue
		}
		for param, p := range doc.Parameters {
			if p.Default == nil {
				continue
			}
			refs := c.Refs(Defaults(), "http://127.0.0.1:3000")
			delete(refs, param) // the template's default, not the stack's override
			env, err := c.Template.FunctionEnv(fn, refs)
			if err != nil {
				t.Fatalf("%s: %v", fn, err)
			}
			refs[param] = probe
			probed, err := c.Template.FunctionEnv(fn, refs)
			if err != nil {
				continue // a parameter a condition tests: not a variable's value
			}
			for name, v := range probed {
				if v != probe || env[name] != *p.Default {
					continue
				}
				want, err := load(func(k string) string { return env[k] })
				if err != nil {
					t.Fatalf("%s with the template's defaults: %v", fn, err)
				}
				got, err := load(func(k string) string {
					if k == name {
						return ""
					}
					return env[k]
				})
				if err != nil {
					t.Errorf("%s: without %s (parameter %s, default %q): %v", fn, name, param, *p.Default, err)
				} else if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: %s (parameter %s) defaults to %q in template.yaml, but the configuration read without it differs:\n with:    %+v\n without: %+v",
						fn, name, param, *p.Default, want, got)
				}
				checked++
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d variables' defaults; the template's functions read more than that", checked)
	}
}
