package allocation

import (
	"reflect"
	"testing"
)

func lat(id string, ms map[string]float64) PlayerLatency {
	return PlayerLatency{PlayerID: id, LatencyMs: ms}
}

func TestRankRegions(t *testing.T) {
	tests := []struct {
		name        string
		players     []PlayerLatency
		maxMs       float64
		want        []string
		wantRelaxed bool
	}{
		{"the issue's example", []PlayerLatency{lat("p1", map[string]float64{"us-west": 42, "eu-central-1": 130})}, 0,
			[]string{"us-west", "eu-central-1"}, false},
		{"most players wins over lower latency", []PlayerLatency{
			lat("p1", map[string]float64{"us-west": 80, "eu-central-1": 20}),
			lat("p2", map[string]float64{"us-west": 90}),
		}, 0, []string{"us-west", "eu-central-1"}, false},
		{"tie on players: lowest average", []PlayerLatency{
			lat("p1", map[string]float64{"a": 50, "b": 40}),
			lat("p2", map[string]float64{"a": 50, "b": 70}),
		}, 0, []string{"a", "b"}, false}, // a avg 50, b avg 55
		{"tie on average: lowest maximum", []PlayerLatency{
			lat("p1", map[string]float64{"a": 40, "b": 30}),
			lat("p2", map[string]float64{"a": 60, "b": 70}),
		}, 0, []string{"a", "b"}, false}, // both avg 50; a max 60 < b max 70
		{"full tie: by name", []PlayerLatency{lat("p1", map[string]float64{"z": 10, "m": 10})}, 0, []string{"m", "z"}, false},
		{"custom- prefix and case ignored", []PlayerLatency{
			lat("p1", map[string]float64{"custom-US-West": 40}),
			lat("p2", map[string]float64{"us-west": 60}),
		}, 0, []string{"us-west"}, false},
		{"cap drops a region where any player exceeds it", []PlayerLatency{
			lat("p1", map[string]float64{"us-west": 40, "eu": 30}),
			lat("p2", map[string]float64{"us-west": 180, "eu": 90}),
		}, 150, []string{"eu"}, false},
		{"everything dropped: unfiltered ranking, relaxed", []PlayerLatency{
			lat("p1", map[string]float64{"us-west": 400, "eu": 300}),
		}, 150, []string{"eu", "us-west"}, true},
		{"no latencies", nil, 150, nil, false},
	}
	for _, tc := range tests {
		ranked, relaxed := RankRegions(tc.players, tc.maxMs)
		var got []string
		for _, r := range ranked {
			got = append(got, r.Region)
		}
		if !reflect.DeepEqual(got, tc.want) || relaxed != tc.wantRelaxed {
			t.Errorf("%s: RankRegions = %v relaxed=%v; want %v relaxed=%v", tc.name, got, relaxed, tc.want, tc.wantRelaxed)
		}
	}
}

func TestBuildPlan(t *testing.T) {
	ranked := []RankedRegion{{Region: "eu", Players: 2}, {Region: "us-west", Players: 1}, {Region: "ap", Players: 1}}
	tests := []struct {
		name      string
		preferred []string
		ranked    []RankedRegion
		fallback  string
		max       int
		want      []string
	}{
		{"one region then fallback (old behaviour)", []string{"us-west"}, nil, "eu", 3, []string{"us-west:requested", "eu:fallback"}},
		{"fallback equal to the request", []string{"us-west"}, nil, "us-west", 3, []string{"us-west:requested"}},
		{"ordered preferences then fallback, capped", []string{"a", "b", "c"}, nil, "eu", 3, []string{"a:preferred #1", "b:preferred #2", "c:preferred #3"}},
		{"duplicates removed", []string{"a", "b", "a"}, nil, "b", 3, []string{"a:preferred #1", "b:preferred #2"}},
		{"preferences win over latencies", []string{"ap"}, ranked, "", 3, []string{"ap:requested"}},
		{"latency ranking then fallback", nil, ranked, "us-west", 3, []string{"eu:latency #1", "us-west:latency #2", "ap:latency #3"}},
		{"latency ranking capped leaves room only for ranked", nil, ranked[:1], "us-west", 2, []string{"eu:latency #1", "us-west:fallback"}},
		{"nothing but the fallback", nil, nil, "US-West", 3, []string{"us-west:fallback"}},
		{"nothing at all", nil, nil, "", 3, nil},
	}
	for _, tc := range tests {
		var got []string
		for _, s := range BuildPlan(tc.preferred, tc.ranked, tc.fallback, tc.max) {
			reason := s.Reason
			if i := len("latency #1"); len(reason) > i && reason[:8] == "latency " {
				reason = reason[:i]
			}
			got = append(got, s.Region+":"+reason)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: BuildPlan = %v, want %v", tc.name, got, tc.want)
		}
	}
}
