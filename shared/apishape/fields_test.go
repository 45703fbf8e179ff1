package apishape

import (
	"reflect"
	"testing"
)

func TestFields(t *testing.T) {
	type inner struct {
		A string `json:"a,omitzero"`
	}
	type shape struct {
		Name   string `json:"name"`
		Opt    int    `json:"opt,omitempty"`
		Hidden bool   `json:"-"`
		hidden bool
		inner
		Tagged inner `json:"tagged"`
		Bare   string
	}
	_ = shape{}.hidden
	var got []string
	for _, f := range Fields(reflect.TypeFor[*shape]()) {
		got = append(got, f.Name+map[bool]string{true: "!", false: "?"}[f.Always])
	}
	want := []string{"name!", "opt?", "a?", "tagged!", "Bare!"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Fields = %v, want %v", got, want)
	}
}

// The shapes' JSON names are what docs/openapi.yaml says (tests/contract_shapes_test.go
// compares them field by field); here, that Allocation and GameServerState
// carry Lifecycle's fields in place, and the SDK's answer metadata is not
// JSON.
func TestLifecycleIsInline(t *testing.T) {
	names := func(v any) map[string]bool {
		out := map[string]bool{}
		for _, f := range Fields(reflect.TypeOf(v)) {
			out[f.Name] = true
		}
		return out
	}
	alloc, server := names(Allocation{}), names(GameServerState{})
	for name := range names(Lifecycle{}) {
		if !alloc[name] || !server[name] {
			t.Errorf("%s: in Allocation %v, in GameServerState %v", name, alloc[name], server[name])
		}
	}
	for _, name := range []string{"Created", "RetryAfter", "Lifecycle"} {
		if alloc[name] {
			t.Errorf("Allocation writes %s", name)
		}
	}
}
