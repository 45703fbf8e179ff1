package gamefabric

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	regionname "github.com/gamefabric-alloc/allocsvc/shared/region"
)

type targets = map[string][]PingTarget

func TestDecodePing(t *testing.T) {
	udp := func(addr string, port int) PingTarget { return PingTarget{addr, port, "udp"} }
	tests := []struct {
		name       string
		body       string
		want       targets
		wantReport PingReport // FirstProblem is checked by prefix
		wantErr    string
	}{
		{name: "canonical", body: `{"regions":{"us-west":[{"address":"203.0.113.10","port":7600,"protocol":"udp"}],"EU-Central-1":[{"address":"198.51.100.7","port":7600}]}}`,
			want: targets{"us-west": {udp("203.0.113.10", 7600)}, "eu-central-1": {udp("198.51.100.7", 7600)}}},
		{name: "empty regions", body: `{"regions":{}}`, want: targets{}},
		{name: "tcp", body: `{"regions":{"r":[{"address":"ping.example","port":1,"protocol":"TCP"}]}}`, want: targets{"r": {{"ping.example", 1, "tcp"}}}},

		// Unknown fields are ignored at every level.
		{name: "unknown top-level fields", body: `{"version":2,"regions":{"r":[{"address":"1.2.3.4","port":1}]},"meta":{"x":[1]}}`,
			want: targets{"r": {udp("1.2.3.4", 1)}}},
		{name: "unknown target fields", body: `{"regions":{"r":[{"address":"1.2.3.4","port":1,"ttl":3,"labels":{"a":"b"}}]}}`,
			want: targets{"r": {udp("1.2.3.4", 1)}}},
		// Inside "regions" every key is a region: one that is not skipped.
		{name: "unknown entries in regions", body: `{"regions":{"_meta":{"count":1},"version":2,"r":[{"address":"1.2.3.4","port":1}]}}`,
			want: targets{"r": {udp("1.2.3.4", 1)}}, wantReport: PingReport{RegionsSkipped: 2, FirstProblem: `region "_meta": not a region name`}},

		// Other protocols pass through, lowercased; a bad one drops the target.
		{name: "quic kept", body: `{"regions":{"r":[{"address":"1.2.3.4","port":443,"protocol":" QUIC "},{"address":"1.2.3.4","port":7600}]}}`,
			want: targets{"r": {{"1.2.3.4", 443, "quic"}, udp("1.2.3.4", 7600)}}},
		{name: "protocol too long", body: `{"regions":{"r":[{"address":"1.2.3.4","port":1,"protocol":"` + strings.Repeat("p", MaxPingProtocol+1) + `"},{"address":"1.2.3.5","port":1}]}}`,
			want: targets{"r": {udp("1.2.3.5", 1)}}, wantReport: PingReport{TargetsDropped: 1, FirstProblem: `region "r" target 0: protocol`}},
		{name: "protocol with a space", body: `{"regions":{"r":[{"address":"1.2.3.4","port":1,"protocol":"web socket"},{"address":"1.2.3.5","port":1}]}}`,
			want: targets{"r": {udp("1.2.3.5", 1)}}, wantReport: PingReport{TargetsDropped: 1, FirstProblem: `region "r" target 0: protocol`}},

		// Unusable targets are dropped and counted; a region left without
		// any is omitted (kept with no targets, counted).
		{name: "target without port", body: `{"regions":{"r":[{"address":"1.2.3.4"},{"address":"1.2.3.5","port":2}]}}`,
			want: targets{"r": {udp("1.2.3.5", 2)}}, wantReport: PingReport{TargetsDropped: 1, FirstProblem: `region "r" target 0: port must be 1-65535`}},
		{name: "bad targets of every kind", body: `{"regions":{"r":[{"port":1},{"address":"","port":1},{"address":"a b","port":1},{"address":"10.0.0.0/8","port":1},` +
			`{"address":"` + strings.Repeat("a", MaxAddressLen+1) + `","port":1},{"address":"a","port":0},{"address":"a","port":70000},{"address":"a","port":"7600"},` +
			`{"address":"a","port":7.5},{"address":7,"port":1},"1.2.3.4:7600",null,{"address":"ok","port":9}]}}`,
			want: targets{"r": {udp("ok", 9)}}, wantReport: PingReport{TargetsDropped: 12, FirstProblem: `region "r" target 0: address`}},
		{name: "region with none left omitted", body: `{"regions":{"r":[{"address":"1.2.3.4"}],"s":[{"address":"1.2.3.5","port":1}]}}`,
			want: targets{"r": {}, "s": {udp("1.2.3.5", 1)}}, wantReport: PingReport{TargetsDropped: 1, RegionsOmitted: 1, FirstProblem: `region "r" target 0`}},
		{name: "region without servers omitted", body: `{"regions":{"us-west":[],"eu":null}}`,
			want: targets{"us-west": {}, "eu": {}}, wantReport: PingReport{RegionsOmitted: 2}},
		{name: "duplicate targets kept once", body: `{"regions":{"r":[{"address":"a","port":1},{"address":"a","port":1,"protocol":"UDP"}]}}`,
			want: targets{"r": {udp("a", 1)}}},

		// Region names: unusable ones skipped, case duplicates merged.
		{name: "empty and odd region names skipped", body: `{"regions":{"":[{"address":"a","port":1}]," ":[],"us west":[],"a/b":[],"` + strings.Repeat("r", regionname.MaxName+1) + `":[],"ok":[{"address":"a","port":1}]}}`,
			want: targets{"ok": {udp("a", 1)}}, wantReport: PingReport{RegionsSkipped: 5, FirstProblem: `region "": not a region name`}},
		{name: "targets not a list skipped", body: `{"regions":{"r":{"targets":[]},"s":[{"address":"a","port":1}]}}`,
			want: targets{"s": {udp("a", 1)}}, wantReport: PingReport{RegionsSkipped: 1, FirstProblem: `region "r": targets are not a list`}},
		{name: "case duplicates merged", body: `{"regions":{"US-West":[{"address":"a","port":1},{"address":"b","port":1}],"us-west":[{"address":"b","port":1},{"address":"c","port":1}]}}`,
			want: targets{"us-west": {udp("a", 1), udp("b", 1), udp("c", 1)}}, wantReport: PingReport{RegionsMerged: 1}},

		// Bounds.
		{name: "targets over the limit", body: pingBody(1, MaxPingTargets+3),
			want: targets{"region-000": pingTargets(MaxPingTargets)}, wantReport: PingReport{TargetsOverLimit: 3, FirstProblem: `region "region-000": more than 64 targets`}},
		{name: "regions over the limit", body: pingBody(MaxPingRegions+2, 1),
			want: pingRegions(MaxPingRegions), wantReport: PingReport{RegionsOverLimit: 2, FirstProblem: `region "region-256": more than 256 regions`}},

		// Still errors: the cache keeps its last good targets.
		{name: "missing regions", body: `{}`, wantErr: `no "regions" object`},
		{name: "null regions", body: `{"regions":null}`, wantErr: `no "regions" object`},
		{name: "other shape", body: `{"us-west":["1.2.3.4"]}`, wantErr: `no "regions" object`},
		{name: "list instead of map", body: `{"regions":[{"region":"us-west"}]}`, wantErr: `no "regions" object`},
		{name: "not JSON", body: `<html>502</html>`, wantErr: "does not parse"},
		{name: "not an object", body: `[1]`, wantErr: "does not parse"},
		{name: "trailing data", body: `{"regions":{}} {}`, wantErr: "does not parse"},
		{name: "too large", body: `{"regions":{},"x":"` + strings.Repeat("a", MaxResponseBytes) + `"}`, wantErr: "exceeds"},
		{name: "not one target usable", body: `{"regions":{"r":[{"host":"1.2.3.4","ports":{"ping":7600}}],"s":[]}}`, wantErr: `not one listed ping target is usable (first problem: region "r" target 0: address`},
		{name: "no region usable", body: `{"regions":{"r":{"targets":[{"address":"1.2.3.4","port":1}]}}}`, wantErr: "not one listed ping target is usable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodePing([]byte(tc.body))
			if tc.wantErr != "" {
				var e *Error
				if !errors.As(err, &e) || e.Kind != KindDecode || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "expected {") {
					t.Fatalf("err = %v, want a decode error containing %q and the expected shape", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got.Regions, tc.want) {
				t.Fatalf("DecodePing = %v, %v; want %v", got.Regions, err, tc.want)
			}
			report, first := got.Report, got.Report.FirstProblem
			report.FirstProblem = ""
			wantFirst := tc.wantReport.FirstProblem
			tc.wantReport.FirstProblem = ""
			if report != tc.wantReport || !strings.HasPrefix(first, wantFirst) || (wantFirst == "" && first != "") {
				t.Fatalf("report = %+v (first problem %q), want %+v (first problem %q...)", report, first, tc.wantReport, wantFirst)
			}
			if report.Problems() != (report.TargetsDropped+report.TargetsOverLimit+report.RegionsSkipped+report.RegionsOverLimit > 0) {
				t.Fatalf("Problems() = %v for %+v", report.Problems(), report)
			}
		})
	}
}

// pingBody lists regions region-000... with n targets each.
func pingBody(regions, n int) string {
	var rs []string
	for r := range regions {
		var ts []string
		for i := range n {
			ts = append(ts, fmt.Sprintf(`{"address":"10.0.%d.%d","port":%d}`, i/250, i%250, 7000+r))
		}
		rs = append(rs, fmt.Sprintf(`"region-%03d":[%s]`, r, strings.Join(ts, ",")))
	}
	return `{"regions":{` + strings.Join(rs, ",") + `}}`
}

func pingTargets(n int) []PingTarget {
	out := []PingTarget{}
	for i := range n {
		out = append(out, PingTarget{fmt.Sprintf("10.0.%d.%d", i/250, i%250), 7000, "udp"})
	}
	return out
}

func pingRegions(n int) targets {
	out := targets{}
	for r := range n {
		out[fmt.Sprintf("region-%03d", r)] = []PingTarget{{"10.0.0.0", 7000 + r, "udp"}}
	}
	return out
}

func TestPingClientFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/ping" || r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid token"}`))
			return
		}
		_, _ = w.Write([]byte(`{"regions":{"us-west":[{"address":"127.0.0.1","port":7600},{"address":"127.0.0.1"}]}}`))
	}))
	defer srv.Close()
	c := NewPingClient(srv.Client(), srv.URL+"/ping")
	got, err := c.Fetch(context.Background(), "tok")
	if err != nil || len(got.Regions["us-west"]) != 1 || got.Report.TargetsDropped != 1 {
		t.Fatalf("Fetch = %+v, %v", got, err)
	}
	_, err = c.Fetch(context.Background(), "wrong")
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusUnauthorized || e.Message != "invalid token" || err.Error() != "ping service answered 401: invalid token" {
		t.Fatalf("err = %v, want the Ping Service's 401", err)
	}
}
