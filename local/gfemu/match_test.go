package gfemu

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestMatch(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	srv := func(addr, region string, prio int, at int, attrs map[string]string, required ...string) Server {
		return Server{Address: addr, Region: region, Priority: prio, Attributes: attrs, RequiredAttributes: required, RegisteredAt: t0.Add(time.Duration(at) * time.Second)}
	}
	prag := map[string]string{"env": "prag", "armadaset": "blue"}
	tests := []struct {
		name    string
		servers []Server
		region  string
		attrs   map[string]string
		want    []string
	}{
		{name: "exact region only",
			servers: []Server{srv("a:1", "us-west", 0, 0, nil), srv("b:1", "us-west-2", 0, 0, nil), srv("c:1", "US-WEST", 0, 0, nil), srv("d:1", "", 0, 0, nil)},
			region:  "us-west", want: []string{"a:1"}},
		{name: "empty region matches nothing, not region-less servers",
			servers: []Server{srv("a:1", "", 0, 0, nil)}, region: "", want: nil},
		{name: "no attributes requested matches any attributes",
			servers: []Server{srv("a:1", "r", 0, 0, prag), srv("b:1", "r", 0, 1, nil)},
			region:  "r", want: []string{"a:1", "b:1"}},
		{name: "requested attributes are a subset of the server's",
			servers: []Server{srv("a:1", "r", 0, 0, prag), srv("b:1", "r", 0, 1, map[string]string{"env": "prag"})},
			region:  "r", attrs: map[string]string{"env": "prag", "armadaset": "blue"}, want: []string{"a:1"}},
		{name: "attribute value must be equal",
			servers: []Server{srv("a:1", "r", 0, 0, map[string]string{"env": "prod"}), srv("b:1", "r", 0, 1, map[string]string{"env": "prag"})},
			region:  "r", attrs: map[string]string{"env": "prag"}, want: []string{"b:1"}},
		{name: "attribute values are case sensitive",
			servers: []Server{srv("a:1", "r", 0, 0, map[string]string{"env": "Prag"})},
			region:  "r", attrs: map[string]string{"env": "prag"}, want: nil},
		{name: "empty requested value still needs the key",
			servers: []Server{srv("a:1", "r", 0, 0, nil), srv("b:1", "r", 0, 1, map[string]string{"env": ""})},
			region:  "r", attrs: map[string]string{"env": ""}, want: []string{"b:1"}},
		{name: "required key missing from request",
			servers: []Server{srv("a:1", "r", 0, 0, prag, "env"), srv("b:1", "r", 5, 1, prag)},
			region:  "r", attrs: map[string]string{"armadaset": "blue"}, want: []string{"b:1"}},
		{name: "required key present in request",
			servers: []Server{srv("a:1", "r", 0, 0, prag, "env", "armadaset")},
			region:  "r", attrs: map[string]string{"env": "prag", "armadaset": "blue"}, want: []string{"a:1"}},
		{name: "required key present but all required keys needed",
			servers: []Server{srv("a:1", "r", 0, 0, prag, "env", "armadaset")},
			region:  "r", attrs: map[string]string{"env": "prag"}, want: nil},
		{name: "lower priority number first",
			servers: []Server{srv("a:1", "r", 10, 0, nil), srv("b:1", "r", 0, 5, nil), srv("c:1", "r", 3, 1, nil)},
			region:  "r", want: []string{"b:1", "c:1", "a:1"}},
		{name: "priority ties by earliest registration",
			servers: []Server{srv("a:1", "r", 1, 9, nil), srv("b:1", "r", 1, 2, nil), srv("c:1", "r", 0, 5, nil), srv("d:1", "r", 1, 4, nil)},
			region:  "r", want: []string{"c:1", "b:1", "d:1", "a:1"}},
		{name: "equal times keep input order",
			servers: []Server{srv("z:1", "r", 0, 0, nil), srv("a:1", "r", 0, 0, nil)},
			region:  "r", want: []string{"z:1", "a:1"}},
		{name: "no servers", servers: nil, region: "r", want: nil},
		{name: "no match",
			servers: []Server{srv("a:1", "eu", 0, 0, prag)},
			region:  "us", attrs: map[string]string{"env": "prag"}, want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(tc.servers)
			var got []string
			for _, s := range Match(tc.servers, tc.region, tc.attrs) {
				got = append(got, s.Address)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Match = %v, want %v", got, tc.want)
			}
			if !reflect.DeepEqual(before, tc.servers) {
				t.Fatal("Match modified its input")
			}
		})
	}
}
