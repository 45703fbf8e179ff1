package matchmaking

import (
	"strings"
	"testing"
)

func TestParseCustomEventData(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		region  string
		version string
		problem string // part of the error; "" = accepted
	}{
		{"empty", "", "", "", ""},
		{"blank", "  \n", "", "", ""},
		{"an empty object", "{}", "", "", ""},
		{"region only", `{"region":"eu-central-1"}`, "eu-central-1", "", ""},
		{"GameFabric's guide, no attributes", `{"region":"eu","attributes":{}}`, "eu", "", ""},
		{"gameServerVersion", `{"region":"eu","gameServerVersion":"prod::arena"}`, "eu", "prod::arena", ""},
		{"attributes env and armadaset", `{"attributes":{"env":"prod","armadaset":"arena"}}`, "", "prod::arena", ""},
		{"attributes env only: the armada set's fallback", `{"attributes":{"env":"prod"}}`, "", "prod::", ""},
		{"attributes armadaset only: the environment's fallback", `{"attributes":{"armadaset":"arena"}}`, "", "::arena", ""},
		{"surrounding whitespace", " \t{\"region\":\"eu\"}\n ", "eu", "", ""},
		{"at the 256-byte limit", `{"region":"` + strings.Repeat("r", 256-13) + `"}`, strings.Repeat("r", 256-13), "", ""},

		{"an unknown field", `{"region":"eu","regoin":"us"}`, "", "", `unknown field "regoin"`},
		{"an unknown attribute", `{"attributes":{"env":"prod","map":"arena"}}`, "", "", `attributes names "map"`},
		{"both gameServerVersion and attributes", `{"gameServerVersion":"prod::arena","attributes":{"env":"prod"}}`, "", "", "both"},
		{"an array", `["eu"]`, "", "", "not a JSON object"},
		{"a string", `"eu"`, "", "", "not a JSON object"},
		{"null", `null`, "", "", "must be a JSON object"},
		{"a number", `42`, "", "", "not a JSON object"},
		{"not JSON", `region=eu`, "", "", "not a JSON object"},
		{"a region that is no string", `{"region":1}`, "", "", "not a JSON object"},
		{"an attribute that is no string", `{"attributes":{"env":1}}`, "", "", "not a JSON object"},
		{"trailing data", `{"region":"eu"} x`, "", "", "after its JSON object"},
		{"a second object", `{"region":"eu"}{"region":"us"}`, "", "", "after its JSON object"},
		{"truncated", `{"region":"eu"`, "", "", "not a JSON object"},
		{"more than 256 bytes", `{"region":"` + strings.Repeat("r", 256-12) + `"}`, "", "", "257 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCustomEventData(tc.in)
			if tc.problem == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if got.Region != tc.region || got.Version() != tc.version {
					t.Fatalf("region %q, version %q; want %q, %q", got.Region, got.Version(), tc.region, tc.version)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.problem) {
				t.Fatalf("err = %v, want one saying %q", err, tc.problem)
			}
			if got.Region != "" || got.Version() != "" {
				t.Fatalf("a refused customEventData still gave %+v", got)
			}
		})
	}
}
