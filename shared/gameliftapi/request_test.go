package gameliftapi

import (
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

func TestRequestOrdersTheQueuesRegions(t *testing.T) {
	q := Queue{Regions: []string{"us-west", "eu-central-1", "ap-south-1"}, Timeout: 30 * time.Second, GameServerVersion: "prag::arena",
		LatencyPolicies: []allocation.LatencyPolicy{{MaxPlayerLatencyMs: 100}}}
	lat := func(player, region string, ms float64) gameinstance.RegionLatency {
		return gameinstance.RegionLatency{PlayerID: player, Region: region, LatencyMs: ms}
	}
	tests := []struct {
		name     string
		in       StartInput
		order    string
		players  int
		policies int
		err      string
	}{
		{"the queue's order", StartInput{}, "us-west,eu-central-1,ap-south-1", 0, 0, ""},
		{"by latency, then the rest", StartInput{Latencies: []gameinstance.RegionLatency{lat("p1", "custom-EU-Central-1", 30), lat("p2", "eu-central-1", 50),
			lat("p1", "ap-south-1", 20), lat("p1", "sa-east-1", 1)}}, "eu-central-1,ap-south-1,us-west", 2, 1, ""},
		{"LocationOrder, then the queue", StartInput{LocationOrder: []string{"ap-south-1"}}, "ap-south-1,us-west,eu-central-1", 0, 0, ""},
		{"LocationOrder alone", StartInput{LocationOrder: []string{"AP-South-1", "us-west"}, FallbackStrategy: fallbackNone}, "ap-south-1,us-west", 0, 0, ""},
		{"a location the queue lacks", StartInput{LocationOrder: []string{"sa-east-1"}}, "", 0, 0, `names "sa-east-1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.PlacementID = "pl-1"
			req, err := request(tt.in, q)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || strings.Join(req.PreferredRegions, ",") != tt.order || len(req.PlayerLatencies) != tt.players ||
				len(req.LatencyPolicies) != tt.policies || *req.QueueTimeoutSeconds != 30 || req.GameServerVersion != "prag::arena" {
				t.Fatalf("request = %+v, %v; want order %s, %d players, %d policies", req, err, tt.order, tt.players, tt.policies)
			}
		})
	}
}
