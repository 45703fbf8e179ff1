package allocation

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

func TestDecodeRequest(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    Request
		wantErr string
	}{
		{name: "full", body: `{"gameInstanceId":"gi-1","desiredRegion":"us-west","gameServerVersion":"prag::set","serverArgs":"-x","partnerGameToken":"t","partnerSocialToken":"s"}`,
			want: Request{GameInstanceID: "gi-1", DesiredRegion: "us-west", GameServerVersion: "prag::set", ServerArgs: "-x", PartnerGameToken: "t", PartnerSocialToken: "s"}},
		{name: "minimal", body: ` {"gameInstanceId":"gi-1"} `, want: Request{GameInstanceID: "gi-1"}},
		{name: "rooms fields", body: `{"gameInstanceId":"gi-1","scheduling":"Distributed","dedicated":true}`,
			want: Request{GameInstanceID: "gi-1", Scheduling: "Distributed", Dedicated: true}},
		{name: "dedicated not a boolean", body: `{"gameInstanceId":"gi-1","dedicated":"yes"}`, wantErr: `field "dedicated" must be a bool`},
		{name: "unknown field", body: `{"gameInstanceId":"gi-1","region":"x"}`, wantErr: `unknown field "region"`},
		{name: "wrong type", body: `{"gameInstanceId":42}`, wantErr: `field "gameInstanceId" must be a string`},
		{name: "empty", body: ``, wantErr: "empty"},
		{name: "array", body: `[]`, wantErr: "not a valid allocation request"},
		{name: "null", body: `null`, wantErr: "must be a JSON object"},
		{name: "trailing data", body: `{"gameInstanceId":"a"} {"gameInstanceId":"b"}`, wantErr: "data after the JSON object"},
		{name: "truncated", body: `{"gameInstanceId":"a"`, wantErr: "not a valid allocation request"},
		{name: "too large", body: `{"serverArgs":"` + strings.Repeat("a", MaxBodyBytes) + `"}`, wantErr: "exceeds 65536 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeRequest([]byte(tc.body))
			if tc.wantErr != "" {
				assertInvalid(t, err, tc.wantErr)
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("DecodeRequest = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func assertInvalid(t *testing.T, err error, contains string) {
	t.Helper()
	var e *gameinstance.Error
	if !errors.As(err, &e) || e.Code != gameinstance.CodeInvalidRequest {
		t.Fatalf("err = %v, want INVALID_REQUEST", err)
	}
	if !strings.Contains(e.Message, contains) {
		t.Fatalf("message %q does not contain %q", e.Message, contains)
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		version, fbEnv, fbSet string
		env, set              string
		wantErr               string
	}{
		{version: "prag::sample-game-armada-set", env: "prag", set: "sample-game-armada-set"},
		{version: "prag::set::extra", wantErr: "label value"}, // split on the first "::" only
		{version: "", fbEnv: "dev", fbSet: "fleet", env: "dev", set: "fleet"},
		{version: "::fleet", fbEnv: "dev", env: "dev", set: "fleet"},
		{version: "prod::", fbSet: "fleet", env: "prod", set: "fleet"},
		{version: "prod", fbSet: "fleet", env: "prod", set: "fleet"},
		{version: " prod :: fleet ", env: "prod", set: "fleet"},
		{version: "::fleet", wantErr: "no environment and FALLBACK_ENVIRONMENT"},
		{version: "prod::", wantErr: "no armada set and FALLBACK_ARMADA_SET"},
		{version: "", wantErr: "no environment"},
		{version: "bad env::fleet", wantErr: `environment "bad env"`},
		{version: "prod::" + strings.Repeat("a", 64), wantErr: "at most 63"},
	}
	for _, tc := range tests {
		t.Run(tc.version, func(t *testing.T) {
			env, set, err := ParseVersion(tc.version, tc.fbEnv, tc.fbSet)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || env != tc.env || set != tc.set {
				t.Fatalf("ParseVersion = %q, %q, %v; want %q, %q", env, set, err, tc.env, tc.set)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	const packed = gameinstance.SchedulingPacked
	d := Defaults{defaults.Request{Region: "eu-central-1", Environment: "prag", ArmadaSet: "fleet", MaxAttempts: defaults.MaxAllocationAttempts}}
	tests := []struct {
		name    string
		req     Request
		want    Spec
		wantErr []string
	}{
		{name: "region normalised, fallback appended",
			req: Request{GameInstanceID: "gi-1", DesiredRegion: "  US-West ", GameServerVersion: "dev::arena", ServerArgs: "-map=x"},
			want: Spec{GameInstanceID: "gi-1", Plan: []PlanStep{{"us-west", "requested"}, {"eu-central-1", "fallback"}}, Environment: "dev", ArmadaSet: "arena",
				Fingerprint: gameinstance.Fingerprint{DesiredRegion: "us-west", GameServerVersion: "dev::arena", ServerArgs: "-map=x"}, Scheduling: packed}},
		{name: "defaults only",
			req:  Request{GameInstanceID: "a.b:c_d-e"},
			want: Spec{GameInstanceID: "a.b:c_d-e", Plan: []PlanStep{{"eu-central-1", "fallback"}}, Environment: "prag", ArmadaSet: "fleet", Scheduling: packed}},
		// Packed is the default: naming it is the same request as not.
		{name: "Packed named",
			req:  Request{GameInstanceID: "gi", Scheduling: "Packed"},
			want: Spec{GameInstanceID: "gi", Plan: []PlanStep{{"eu-central-1", "fallback"}}, Environment: "prag", ArmadaSet: "fleet", Scheduling: packed}},
		{name: "Distributed and dedicated are fingerprinted",
			req: Request{GameInstanceID: "gi", Scheduling: "Distributed", Dedicated: true},
			want: Spec{GameInstanceID: "gi", Plan: []PlanStep{{"eu-central-1", "fallback"}}, Environment: "prag", ArmadaSet: "fleet",
				Fingerprint: gameinstance.Fingerprint{Scheduling: gameinstance.SchedulingDistributed, Dedicated: true}, Scheduling: gameinstance.SchedulingDistributed}},
		{name: "unknown scheduling", req: Request{GameInstanceID: "gi", Scheduling: "packed"}, wantErr: []string{`scheduling must be "Packed" or "Distributed"`}},
		{name: "both desiredRegion and preferredRegions",
			req:     Request{GameInstanceID: "gi", DesiredRegion: "a", PreferredRegions: []string{"b", "c"}},
			wantErr: []string{"not both"}},
		{name: "bad latencies",
			req:     Request{GameInstanceID: "gi", PlayerLatencies: []PlayerLatency{{PlayerID: "p", LatencyMs: map[string]float64{"us-west": -1}}}},
			wantErr: []string{"playerLatencies[0].latencyMs"}},
		{name: "bad cap",
			req:     Request{GameInstanceID: "gi", MaxPlayerLatencyMs: new(float64)},
			wantErr: []string{"maxPlayerLatencyMs"}},
		{name: "every problem at once",
			req:     Request{GameInstanceID: "bad id!", DesiredRegion: "us west", ServerArgs: strings.Repeat("x", 9000)},
			wantErr: []string{"gameInstanceId may only contain", "desiredRegion must be", "serverArgs must be at most"}},
		{name: "a caller's token of 32 characters",
			req: Request{GameInstanceID: "gi", PartnerGameToken: strings.Repeat("aZ0-._~+", 4) + "=="},
			want: Spec{GameInstanceID: "gi", Plan: []PlanStep{{"eu-central-1", "fallback"}}, Environment: "prag", ArmadaSet: "fleet",
				PartnerGameToken: strings.Repeat("aZ0-._~+", 4) + "==", Scheduling: packed}},
		{name: "a guessable token", req: Request{GameInstanceID: "gi", PartnerGameToken: "secret"}, wantErr: []string{"partnerGameToken must be 32-1024 characters"}},
		{name: "31 characters", req: Request{GameInstanceID: "gi", PartnerGameToken: strings.Repeat("a", 31)}, wantErr: []string{"partnerGameToken must be 32-1024"}},
		{name: "a token a Bearer header cannot carry", req: Request{GameInstanceID: "gi", PartnerGameToken: strings.Repeat("a", 32) + " b"}, wantErr: []string{"partnerGameToken must be"}},
		{name: "a token too long", req: Request{GameInstanceID: "gi", PartnerGameToken: strings.Repeat("a", 1025)}, wantErr: []string{"partnerGameToken must be"}},
		{name: "missing id", req: Request{}, wantErr: []string{"gameInstanceId is required"}},
		{name: "id too long", req: Request{GameInstanceID: strings.Repeat("a", 129)}, wantErr: []string{"at most 128"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := d.Resolve(tc.req)
			if tc.wantErr != nil {
				for _, w := range tc.wantErr {
					assertInvalid(t, err, w)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Resolve = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
	if _, err := (Defaults{}).Resolve(Request{GameInstanceID: "gi"}); err == nil ||
		!strings.Contains(err.Error(), "desiredRegion, preferredRegions or playerLatencies is required") || !strings.Contains(err.Error(), "FALLBACK_ARMADA_SET") {
		t.Fatalf("no defaults: err = %v, want region and version problems", err)
	}
}
