package allocation

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Realistic inputs: what a backend sends for one match.

var benchDefaults = Defaults{defaults.Request{Region: "eu-central-1", Environment: "prag", ArmadaSet: "sample-game-armada-set", MaxAttempts: defaults.MaxAllocationAttempts}}

const benchDesiredBody = `{"gameInstanceId":"gi-5f1c2a9e-7b4d-4e0a-9c1f-2d3e4f5a6b7c","desiredRegion":"US-West",` +
	`"gameServerVersion":"prag::sample-game-armada-set","serverArgs":"-map=arena -mode=ranked -maxPlayers=10",` +
	`"partnerSocialToken":"social-0123456789abcdef"}`

// benchRegions are 8 regions as GameFabric names them.
var benchRegions = []string{"us-west", "us-east", "eu-central-1", "eu-west", "ap-northeast", "ap-southeast", "sa-east", "me-central"}

// benchPlayers is 10 players, each reporting all 8 regions.
func benchPlayers() []PlayerLatency {
	players := make([]PlayerLatency, 10)
	for p := range players {
		ms := map[string]float64{}
		for r, region := range benchRegions {
			ms[region] = float64(20 + 15*r + 3*p)
		}
		players[p] = PlayerLatency{PlayerID: fmt.Sprintf("player-%02d", p), LatencyMs: ms}
	}
	return players
}

func benchLatencyBody(b *testing.B) []byte {
	b.Helper()
	body, err := json.Marshal(map[string]any{
		"gameInstanceId":     "gi-5f1c2a9e-7b4d-4e0a-9c1f-2d3e4f5a6b7c",
		"gameServerVersion":  "prag::sample-game-armada-set",
		"serverArgs":         "-map=arena",
		"playerLatencies":    benchPlayers(),
		"maxPlayerLatencyMs": 150,
	})
	if err != nil {
		b.Fatal(err)
	}
	return body
}

func BenchmarkDecodeRequest(b *testing.B) {
	for _, bc := range []struct {
		name string
		body []byte
	}{
		{"desiredRegion", []byte(benchDesiredBody)},
		{"playerLatencies-8x10", benchLatencyBody(b)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.body)))
			for b.Loop() {
				if _, err := DecodeRequest(bc.body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkResolve(b *testing.B) {
	desired, err := DecodeRequest([]byte(benchDesiredBody))
	if err != nil {
		b.Fatal(err)
	}
	latency, err := DecodeRequest(benchLatencyBody(b))
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		req  Request
	}{
		{"desiredRegion", desired},
		{"playerLatencies-8x10", latency},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := benchDefaults.Resolve(bc.req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParseVersion(b *testing.B) {
	for _, version := range []string{"prag::sample-game-armada-set", "prag", ""} {
		b.Run(fmt.Sprintf("%q", version), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := ParseVersion(version, "prod", "default-set"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkRankRegions(b *testing.B) {
	players := benchPlayers()
	for _, maxMs := range []float64{0, 150} {
		b.Run(fmt.Sprintf("8x10/cap=%v", maxMs), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if ranked, _ := RankRegions(players, maxMs); len(ranked) == 0 {
					b.Fatal("nothing ranked")
				}
			}
		})
	}
}

func BenchmarkBuildPlan(b *testing.B) {
	ranked, _ := RankRegions(benchPlayers(), 0)
	b.Run("latency-8", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if plan := BuildPlan(nil, ranked, "eu-central-1", 3); len(plan) != 3 {
				b.Fatalf("plan %v", plan)
			}
		}
	})
	b.Run("requested", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if plan := BuildPlan([]string{"us-west"}, nil, "eu-central-1", 3); len(plan) != 2 {
				b.Fatalf("plan %v", plan)
			}
		}
	})
}

// BenchmarkRedact is built once per allocation and applied to every
// attempt's error and body.
func BenchmarkRedact(b *testing.B) {
	body := `{"error":"token Jm0a3vZkq2l8Qf6Yt1uR4xWcN7bH5sD9eK0gP2iL3oA is not valid for region us-west"}`
	b.ReportAllocs()
	for b.Loop() {
		redact := redactor("current-token-0123456789", "Jm0a3vZkq2l8Qf6Yt1uR4xWcN7bH5sD9eK0gP2iL3oA", "social-0123456789abcdef")
		if redact(body) == body {
			b.Fatal("nothing redacted")
		}
	}
}

func BenchmarkHashToken(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		gameinstance.HashToken("Jm0a3vZkq2l8Qf6Yt1uR4xWcN7bH5sD9eK0gP2iL3oA")
	}
}
