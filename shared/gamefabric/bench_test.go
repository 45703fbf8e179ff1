package gamefabric

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/upstreamhttp"
)

// A typical allocate answer: the server, its ports, the callback token and
// what the game server's callback returned.
const benchAllocation = `{"address":"203.0.113.10:7777","ip":"203.0.113.10","ports":{"game":7777,"query":7778},` +
	`"token":"cb-7f3a9c2e5b1d4f6a8e0c","payload":{"accepted":"gi-5f1c2a9e-7b4d-4e0a-9c1f-2d3e4f5a6b7c"}}`

func BenchmarkDecodeAllocation(b *testing.B) {
	for _, bc := range []struct {
		name string
		raw  []byte
	}{
		{"ok", []byte(benchAllocation)},
		{"no-address", []byte(`{"ip":"203.0.113.10","ports":{"game":7777}}`)},
		{"malformed", []byte(`<html><body>502 Bad Gateway</body></html>`)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.raw)))
			for b.Loop() {
				_, _ = DecodeAllocation(bc.raw)
			}
		})
	}
}

// BenchmarkDecodePing is one refresh: 8 regions with 4 targets each.
func BenchmarkDecodePing(b *testing.B) {
	var regions []string
	for _, r := range []string{"us-west", "us-east", "eu-central-1", "eu-west", "ap-northeast", "ap-southeast", "sa-east", "me-central"} {
		var targets []string
		for i := range 4 {
			targets = append(targets, fmt.Sprintf(`{"address":"198.51.100.%d","port":7600,"protocol":"udp"}`, 10+i))
		}
		regions = append(regions, fmt.Sprintf(`%q:[%s]`, r, strings.Join(targets, ",")))
	}
	raw := []byte(`{"regions":{` + strings.Join(regions, ",") + `}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if got, err := DecodePing(raw); err != nil || len(got.Regions) != 8 || got.Report.Problems() {
			b.Fatal(got, err)
		}
	}
}

// BenchmarkStatusError is the error path of every non-2xx answer: the
// {"error"} message, the kept body and Retry-After.
func BenchmarkStatusError(b *testing.B) {
	resp := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"1"}}}
	raw := []byte(`{"error":"rate limit exceeded"}`)
	b.ReportAllocs()
	for b.Loop() {
		if e := upstreamhttp.StatusError(resp, raw); e.RetryAfter != time.Second {
			b.Fatal(e)
		}
	}
}
