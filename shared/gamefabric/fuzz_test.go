package gamefabric

import (
	"errors"
	"testing"
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
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		regions, err := DecodePing(raw)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindDecode {
				t.Fatalf("err = %#v, want a decode error", err)
			}
			return
		}
		for region, targets := range regions {
			for _, tg := range targets {
				if region == "" || tg.Address == "" || tg.Port < 1 || tg.Port > 65535 || (tg.Protocol != "udp" && tg.Protocol != "tcp") {
					t.Fatalf("accepted a bad target %q %+v from %q", region, tg, raw)
				}
			}
		}
	})
}
