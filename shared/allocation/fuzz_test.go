package allocation

import (
	"errors"
	"strings"
	"testing"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// The request decoder and validator must never panic, and must answer
// every input with either a request or an INVALID_REQUEST error.
func FuzzDecodeRequest(f *testing.F) {
	for _, seed := range []string{
		`{"gameInstanceId":"gi-1","desiredRegion":"us-west","gameServerVersion":"prag::set","serverArgs":"-x"}`,
		`{"gameInstanceId":"gi-1","preferredRegions":["a","b"],"maxPlayerLatencyMs":100}`,
		`{"gameInstanceId":"gi-1","playerLatencies":[{"playerId":"p","latencyMs":{"custom-us-west":42}}]}`,
		`{"gameInstanceId":1}`, `[]`, `null`, ``, `{"a":1}`, `{"gameInstanceId":"x"} trailing`,
	} {
		f.Add([]byte(seed))
	}
	d := Defaults{defaults.Request{Region: "eu", Environment: "prag", ArmadaSet: "set", MaxAttempts: defaults.MaxAllocationAttempts}}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodeRequest(body)
		if err != nil {
			assertCode(t, err, gameinstance.CodeInvalidRequest)
			return
		}
		spec, err := d.Resolve(req)
		if err != nil {
			assertCode(t, err, gameinstance.CodeInvalidRequest)
			return
		}
		if len(spec.Plan) == 0 || len(spec.Plan) > 3 || spec.Environment == "" || spec.ArmadaSet == "" {
			t.Fatalf("resolved spec breaks its invariants: %+v", spec)
		}
	})
}

func FuzzParseVersion(f *testing.F) {
	for _, seed := range []string{"prag::sample-game-armada-set", "::", "a::b::c", "", "prod", " x :: y ", "é::ü"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, version string) {
		env, set, err := ParseVersion(version, "fallback-env", "fallback-set")
		if err != nil {
			return
		}
		if env == "" || set == "" || strings.Contains(env, "::") || len(env) > maxLabelValue || len(set) > maxLabelValue {
			t.Fatalf("ParseVersion(%q) = %q, %q", version, env, set)
		}
	})
}

func assertCode(t *testing.T, err error, want gameinstance.Code) {
	t.Helper()
	var e *gameinstance.Error
	if !errors.As(err, &e) || e.Code != want || e.Message == "" {
		t.Fatalf("err = %v, want %s with a message", err, want)
	}
}
