package httpapi

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Every link-back call (link, heartbeat every 10 s per server, end) parses
// the bearer token; link also parses its body.

func BenchmarkBearerToken(b *testing.B) {
	header := "Bearer Jm0a3vZkq2l8Qf6Yt1uR4xWcN7bH5sD9eK0gP2iL3oA"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := BearerToken(header); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLinkBody(b *testing.B) {
	for _, bc := range []struct {
		name string
		raw  []byte
	}{
		{"empty", nil},
		{"full", []byte(`{"address":"203.0.113.10:7777","ports":{"game":7777,"query":7778},"serverName":"us-west-fleet-abc12-7f9c"}`)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var body linkBody
				if err := DecodeOptionalBody(bytes.NewReader(bc.raw), &body); err != nil {
					b.Fatal(err)
				}
				if _, err := body.info(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAllocationView renders a created allocation's response body.
func BenchmarkAllocationView(b *testing.B) {
	now := time.Date(2026, 11, 22, 4, 31, 17, 480_000_000, time.UTC)
	rec := gameinstance.Record{
		GameInstanceID: "gi-5f1c2a9e-7b4d-4e0a-9c1f-2d3e4f5a6b7c", State: gameinstance.StateAllocated, Region: "eu-central-1", FallbackUsed: true,
		Server: &gameinstance.Server{Address: "203.0.113.10:7777", IP: "203.0.113.10", Ports: map[string]int{"game": 7777}},
		Attempts: []gameinstance.Attempt{
			{Region: "us-west", Reason: "requested", Status: 503, Error: "allocator answered 503: no servers", Body: `{"error":"no servers"}`, DurationMs: 41},
			{Region: "eu-central-1", Reason: "fallback", Status: 200, DurationMs: 38},
		},
		CreatedAt: now, UpdatedAt: now.Add(80 * time.Millisecond),
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(ViewOf(rec)); err != nil {
			b.Fatal(err)
		}
	}
}
