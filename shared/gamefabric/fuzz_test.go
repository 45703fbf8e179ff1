package gamefabric

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	regionname "github.com/gamefabric-alloc/allocsvc/shared/region"
)

func FuzzDecodeAllocation(f *testing.F) {
	for _, seed := range []string{
		`{"address":"1.2.3.4:7777","ip":"1.2.3.4","ports":{"game":7777},"token":"t","payload":{"a":1}}`,
		`{"address":"[::1]:7777"}`, `{"ip":"1.2.3.4"}`, `{"address":`, `[]`, `null`, `{"address":"x","ports":{"game":"7777"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := DecodeAllocation(raw)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindDecode || len(e.Body) > MaxErrorBodyKept || len(e.Message) > MaxErrorText+64 {
				t.Fatalf("err = %#v, want a decode error", err)
			}
			return
		}
		if a.Address == "" || len(a.Address) > MaxAddressLen || len(a.IP) > MaxAddressLen || len(a.Ports) > MaxPorts {
			t.Fatalf("accepted an allocation outside the bounds: %q", raw)
		}
	})
}

func FuzzDecodePing(f *testing.F) {
	for _, seed := range []string{
		`{"regions":{"us-west":[{"address":"203.0.113.10","port":7600,"protocol":"udp"}],"eu-central-1":[{"address":"198.51.100.7","port":7600}]}}`,
		`{"regions":{}}`, `{}`, `{"regions":[]}`, `{"regions":{"r":[{"address":"a","port":0}]}}`, `{"regions":{"a":[],"A":[]}}`,
		`{"v":1,"regions":{"r":[{"address":"a","port":1,"protocol":"QUIC","x":{}},{"address":"b"}],"_m":{}}}`,
		`{"regions":{"R":[{"address":"a","port":1}],"r":[{"address":"a","port":1},{"address":"b","port":2,"protocol":"tcp"}]}}`,
		`{"regions":{"r":[{"address":"a b","port":1}],"s":null}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := DecodePing(raw)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindDecode {
				t.Fatalf("err = %#v, want a decode error", err)
			}
			return
		}
		// Deterministic whatever the map order, so a refresh stores what
		// the next one would.
		if again, _ := DecodePing(raw); !reflect.DeepEqual(got, again) {
			t.Fatalf("two decodes of %q differ", raw)
		}
		r := got.Report
		if len(got.Regions) > MaxPingRegions || (r.FirstProblem != "") != r.Problems() || len(r.FirstProblem) > MaxErrorText {
			t.Fatalf("regions %d, report %+v from %q", len(got.Regions), r, raw)
		}
		usable, empty := 0, 0
		for region, targets := range got.Regions {
			if !regionname.Valid(region) || len(targets) > MaxPingTargets {
				t.Fatalf("accepted region %q with %d targets from %q", region, len(targets), raw)
			}
			if len(targets) == 0 {
				empty++
			}
			for i, tg := range targets {
				usable++
				if tg.Address == "" || len(tg.Address) > MaxAddressLen || strings.ContainsFunc(tg.Address, unusable) ||
					tg.Port < 1 || tg.Port > 65535 || tg.Protocol == "" || len(tg.Protocol) > MaxPingProtocol ||
					strings.ContainsFunc(tg.Protocol, unusable) || tg.Protocol != strings.ToLower(tg.Protocol) || slices.Contains(targets[:i], tg) {
					t.Fatalf("accepted a bad target %q %+v from %q", region, tg, raw)
				}
			}
		}
		if r.RegionsOmitted != empty || (usable == 0 && r.TargetsDropped+r.RegionsSkipped > 0) {
			t.Fatalf("report %+v for %d usable targets and %d empty regions from %q", r, usable, empty, raw)
		}
	})
}
