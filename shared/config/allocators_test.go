package config

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestAllocatorFor(t *testing.T) {
	m := valid()
	m["GAMEFABRIC_ALLOCATORS"] = `{
		"EU-Central-1": {"url": "https://eu.allocator.example/prod/eu/allocate", "region": "Prod-EU-Central", "tokenSecretId": "eu-secret"},
		"ap-south": {"url": "https://ap.allocator.example/allocate"}
	}`
	c, err := LoadAllocate(env(m))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		region string
		want   Allocator
	}{
		{"eu-central-1", Allocator{Kind: KindGameFabric, URL: "https://eu.allocator.example/prod/eu/allocate", Region: "Prod-EU-Central", TokenSecretID: "eu-secret"}},
		{"ap-south", Allocator{Kind: KindGameFabric, URL: "https://ap.allocator.example/allocate", Region: "ap-south", TokenSecretID: m["ALLOCATOR_TOKEN_SECRET_ID"]}},
		{"us-west", Allocator{Kind: KindGameFabric, URL: "https://studio.gamefabric.dev/allocator/prod/us/allocate", Region: "us-west", TokenSecretID: m["ALLOCATOR_TOKEN_SECRET_ID"]}},
	}
	for _, tc := range tests {
		if got := c.AllocatorFor(tc.region); got != tc.want {
			t.Errorf("AllocatorFor(%q) = %+v, want %+v", tc.region, got, tc.want)
		}
	}
}

func TestAllocatorsNamesEveryBadEntry(t *testing.T) {
	tests := []struct {
		name, value string
		want        []string
	}{
		{"not JSON", `us-west=https://x`, []string{"GAMEFABRIC_ALLOCATORS must be a JSON object"}},
		{"a list", `[{"url": "https://x"}]`, []string{"GAMEFABRIC_ALLOCATORS must be a JSON object"}},
		{"every bad entry", `{
			"us-west": {"region": "prod-us"},
			"eu": {"url": "http://10.0.0.1/allocate"},
			"ap": {"url": "https://ap.example", "tokenSecret": "typo"},
			"US West": {"url": "https://x.example"},
			"sa": {"url": "https://sa.example", "region": " padded "},
			"ok": {"url": "https://ok.example"}
		}`, []string{
			`GAMEFABRIC_ALLOCATORS["us-west"]: url is required`,
			`GAMEFABRIC_ALLOCATORS["eu"]: url must be an https:// URL`,
			`GAMEFABRIC_ALLOCATORS["ap"]: must be an object`, `unknown field "tokenSecret"`,
			`GAMEFABRIC_ALLOCATORS["US West"]: the region name must be`,
			`GAMEFABRIC_ALLOCATORS["sa"]: region must be the Allocator's region string`,
		}},
		{"one Allocator, two secrets", `{"eu": {"url": "https://eu.example/allocate", "tokenSecretId": "a"}, "eu-west": {"url": "https://eu.example/allocate", "tokenSecretId": "b"}}`,
			[]string{`https://eu.example/allocate is one Allocator with one token list, but its regions (eu, eu-west) name different token secrets`}},
		{"the default Allocator, another secret", `{"us-east": {"url": "https://studio.gamefabric.dev/allocator/prod/us/allocate", "tokenSecretId": "other"}}`,
			[]string{`its regions ((the default Allocator), us-east) name different token secrets`}},
		{"agones: every problem of an entry at once", `{"eu-baremetal": {"kind": "agones", "url": "http://allocator.eu.example", "region": "x",
			"namespace": "Games!", "matchLabels": {"agones.dev/fleet": "{armadaset}", "env": "{environment}", "bad key!": "v"},
			"roomsCounter": "rooms/x", "annotationPrefix": "bad prefix/", "unallocatedStatus": 409}}`, []string{
			`url must be the allocator service's https:// URL`, `region and tokenSecretId are a GameFabric Allocator's`,
			`tlsSecretId is required`, `namespace must be a Kubernetes namespace name`, `roomsCounter must be a Counter's name`,
			`annotationPrefix must be`, `unallocatedStatus 409 would be read as`,
			`matchLabels key "bad key!" is not a Kubernetes label key`, `matchLabels["env"] has the unknown placeholder {environment}`}},
		{"agones: unknown kind, unknown field, a GameFabric entry with Agones members", `{
			"a": {"kind": "gamelift", "url": "https://a.example"},
			"b": {"kind": "agones", "url": "https://b.example", "tlsSecretId": "s", "tlsSecret": "typo"},
			"c": {"url": "https://c.example", "tlsSecretId": "s", "roomsCounter": "rooms"},
			"d": {"kind": "agones", "url": "https://d.example", "tlsSecretId": "s", "matchLabels": {}, "unallocatedStatus": 200}
		}`, []string{
			`GAMEFABRIC_ALLOCATORS["a"]: kind must be "gamefabric" (the default) or "agones", got "gamelift"`,
			`GAMEFABRIC_ALLOCATORS["b"]: must be an object`, `unknown field "tlsSecret"`,
			`GAMEFABRIC_ALLOCATORS["c"]: tlsSecretId, roomsCounter apply to "kind": "agones" only`,
			`GAMEFABRIC_ALLOCATORS["d"]: unallocatedStatus must be the installation's httpUnallocatedStatusCode, 400-599, got 200`,
			`matchLabels must select by 1-16 labels`}},
		{"agones: one URL, two kinds", `{"eu": {"url": "https://eu.example"}, "eu-metal": {"kind": "agones", "url": "https://eu.example", "tlsSecretId": "s"}}`,
			[]string{`https://eu.example is one Allocator with one token list, but its regions (eu, eu-metal) name different token secrets or kinds`}},
		{"twice in another case", `{"us-west": {"url": "https://a.example"}, "US-WEST": {"url": "https://b.example"}}`,
			[]string{`GAMEFABRIC_ALLOCATORS["us-west"]: the region is listed twice`}},
	}
	for _, tc := range tests {
		m := valid()
		m["GAMEFABRIC_ALLOCATORS"] = tc.value
		_, err := LoadAllocate(env(m))
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tc.name, err, w)
			}
		}
		if strings.Contains(err.Error(), `["ok"]`) {
			t.Errorf("%s: a good entry is reported: %v", tc.name, err)
		}
	}
}

func TestAllocatorsEmptyMeansDefault(t *testing.T) {
	c, err := LoadAllocate(env(valid()))
	if err != nil || c.Allocators != nil {
		t.Fatalf("Allocators = %v, %v", c.Allocators, err)
	}
}

// An Agones entry gets the documented defaults; a full one is read as
// written; GameFabric entries beside it are unchanged.
func TestAgonesAllocators(t *testing.T) {
	m := valid()
	m["GAMEFABRIC_ALLOCATORS"] = `{
		"eu-baremetal": {"kind": "agones", "url": "https://allocator.eu.example:443", "namespace": "games", "tlsSecretId": "agones/eu",
			"matchLabels": {"agones.dev/fleet": "{armadaset}", "env": "{env}"}, "roomsCounter": "rooms",
			"annotationPrefix": "example.com/payload-", "unallocatedStatus": 503},
		"us-metal": {"kind": "agones", "url": "https://allocator.us.example", "tlsSecretId": "agones/us"},
		"eu-central-1": {"url": "https://eu.allocator.example/allocate"}
	}`
	c, err := LoadAllocate(env(m))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		region string
		want   Allocator
	}{
		{"eu-baremetal", Allocator{Kind: KindAgones, URL: "https://allocator.eu.example:443", Region: "eu-baremetal", Agones: &Agones{
			TLSSecretID: "agones/eu", Namespace: "games", MatchLabels: map[string]string{"agones.dev/fleet": "{armadaset}", "env": "{env}"},
			RoomsCounter: "rooms", AnnotationPrefix: "example.com/payload-", UnallocatedStatus: 503}}},
		{"us-metal", Allocator{Kind: KindAgones, URL: "https://allocator.us.example", Region: "us-metal", Agones: &Agones{
			TLSSecretID: "agones/us", Namespace: "default", MatchLabels: map[string]string{"allocator.nitrado.net/env": "{env}",
				"allocator.nitrado.net/armadaset": "{armadaset}"}, AnnotationPrefix: "agones.dev/sdk-payload-", UnallocatedStatus: 429}}},
		{"eu-central-1", Allocator{Kind: KindGameFabric, URL: "https://eu.allocator.example/allocate", Region: "eu-central-1",
			TokenSecretID: m["ALLOCATOR_TOKEN_SECRET_ID"]}},
	}
	for _, tc := range tests {
		if got := c.AllocatorFor(tc.region); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("AllocatorFor(%q) = %+v (%+v), want %+v (%+v)", tc.region, got, got.Agones, tc.want, tc.want.Agones)
		}
	}
}

// An Allocator marshals as the entry it was read from.
func TestAllocatorMarshalsAsItsEntry(t *testing.T) {
	m := valid()
	m["GAMEFABRIC_ALLOCATORS"] = `{"eu-metal": {"kind": "agones", "url": "https://a.example", "tlsSecretId": "s", "roomsCounter": "rooms"},
		"eu": {"url": "https://e.example/allocate", "region": "prod-eu", "tokenSecretId": "t"}}`
	c, err := LoadAllocate(env(m))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(c.Allocators)
	m["GAMEFABRIC_ALLOCATORS"] = string(raw)
	again, err := LoadAllocate(env(m))
	if err != nil || !reflect.DeepEqual(again.Allocators, c.Allocators) {
		t.Fatalf("%s read back as %+v, %v", raw, again.Allocators, err)
	}
}
