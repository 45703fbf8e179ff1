package config

import (
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
		{"eu-central-1", Allocator{URL: "https://eu.allocator.example/prod/eu/allocate", Region: "Prod-EU-Central", TokenSecretID: "eu-secret"}},
		{"ap-south", Allocator{URL: "https://ap.allocator.example/allocate", Region: "ap-south", TokenSecretID: m["ALLOCATOR_TOKEN_SECRET_ID"]}},
		{"us-west", Allocator{URL: "https://studio.gamefabric.dev/allocator/prod/us/allocate", Region: "us-west", TokenSecretID: m["ALLOCATOR_TOKEN_SECRET_ID"]}},
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
