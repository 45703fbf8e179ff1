package allocators

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/gamefabric-alloc/allocsvc/shared/agones"
	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/secrets"
	"github.com/gamefabric-alloc/allocsvc/shared/upstreamhttp"
)

func agonesSettings(counter string) config.Agones {
	return config.Agones{TLSSecretID: "s", Namespace: "games", RoomsCounter: counter, AnnotationPrefix: defaults.AgonesAnnotationPrefix,
		MatchLabels: map[string]string{"agones.dev/fleet": "{armadaset}", "env": "{env}-x"}, UnallocatedStatus: 429}
}

// The GameServerAllocation for each kind of request, in the wire form
// Agones' REST gateway reads: whole Ready servers; seed 003's rooms
// (Allocated with a room free, then Ready, counter incremented, fullest or
// emptiest first); a dedicated request on a rooms fleet (its counter full).
func TestAgonesRequest(t *testing.T) {
	payload := allocation.Payload{GameInstanceID: "gi-1", PartnerGameToken: "tok", PragmaBackendAddress: "https://b", ServerArgs: "-map=x"}
	annotations := `"metadata":{"annotations":{"agones.dev/sdk-payload-GameInstanceId":"gi-1","agones.dev/sdk-payload-PartnerGameToken":"tok",` +
		`"agones.dev/sdk-payload-PartnerSocialToken":"","agones.dev/sdk-payload-ServerArgs":"-map=x","agones.dev/sdk-payload-last-applied":"gi-1",` +
		`"agones.dev/sdk-payload-pragmaBackendAddress":"https://b"}}`
	labels := `"matchLabels":{"agones.dev/fleet":"arena","env":"prod-x"}`
	tests := []struct {
		name       string
		counter    string
		scheduling gameinstance.Scheduling
		dedicated  bool
		want       string
	}{
		{"whole servers", "", gameinstance.SchedulingPacked, false,
			`{"namespace":"games","gameServerSelectors":[{` + labels + `,"gameServerState":"READY"}],"scheduling":"Packed",` + annotations + `}`},
		{"rooms, packed", "rooms", gameinstance.SchedulingPacked, false,
			`{"namespace":"games","gameServerSelectors":[{` + labels + `,"gameServerState":"ALLOCATED","counters":{"rooms":{"minAvailable":"1"}}},` +
				`{` + labels + `,"gameServerState":"READY","counters":{"rooms":{"minAvailable":"1"}}}],"scheduling":"Packed",` + annotations +
				`,"priorities":[{"type":"Counter","key":"rooms","order":"Ascending"}],"counters":{"rooms":{"action":"Increment","amount":"1"}}}`},
		{"rooms, distributed", "rooms", gameinstance.SchedulingDistributed, false,
			`{"namespace":"games","gameServerSelectors":[{` + labels + `,"gameServerState":"ALLOCATED","counters":{"rooms":{"minAvailable":"1"}}},` +
				`{` + labels + `,"gameServerState":"READY","counters":{"rooms":{"minAvailable":"1"}}}],"scheduling":"Distributed",` + annotations +
				`,"priorities":[{"type":"Counter","key":"rooms","order":"Descending"}],"counters":{"rooms":{"action":"Increment","amount":"1"}}}`},
		{"dedicated on a rooms fleet", "rooms", gameinstance.SchedulingPacked, true,
			`{"namespace":"games","gameServerSelectors":[{` + labels + `,"gameServerState":"READY"}],"scheduling":"Packed",` + annotations +
				`,"counters":{"rooms":{"action":"Increment","amount":"1","capacity":"1"}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := AgonesAllocator{Settings: agonesSettings(tc.counter)}
			r, err := a.request(allocation.UpstreamRequest{Environment: "prod", ArmadaSet: "arena", Payload: payload, Scheduling: tc.scheduling, Dedicated: tc.dedicated})
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(r)
			if string(raw) != tc.want {
				t.Fatalf("request =\n%s\nwant\n%s", raw, tc.want)
			}
		})
	}
}

// Agones' answers in the domain's terms.
func TestAgonesUpstreamError(t *testing.T) {
	status := func(code int) error {
		return &upstreamhttp.Error{Kind: upstreamhttp.KindStatus, Status: code, Message: "m"}
	}
	tests := []struct {
		name   string
		err    error
		want   allocation.UpstreamKind
		orphan bool
	}{
		{"the unallocated status", status(429), allocation.UpstreamNoCapacity, false},
		{"contention", status(409), allocation.UpstreamContention, false},
		{"unauthenticated", status(401), allocation.UpstreamRefused, false},
		{"permission denied", status(403), allocation.UpstreamRefused, false},
		{"a refused handshake", &upstreamhttp.Error{Kind: upstreamhttp.KindTLS, Unsent: true}, allocation.UpstreamRefused, false},
		{"unavailable is the region's fault, not a lack of capacity", status(503), allocation.UpstreamFailed, false},
		{"not found is no lack of capacity either", status(404), allocation.UpstreamFailed, false},
		{"deadline exceeded may have allocated", status(504), allocation.UpstreamTimeout, true},
		{"an unusable answer", &upstreamhttp.Error{Kind: upstreamhttp.KindDecode}, allocation.UpstreamInvalid, true},
		{"no answer in time", &upstreamhttp.Error{Kind: upstreamhttp.KindTimeout}, allocation.UpstreamTimeout, true},
		{"reset after sending", &upstreamhttp.Error{Kind: upstreamhttp.KindTransport}, allocation.UpstreamTransport, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ids := secrets.NewSource[*agones.Identity](nil, "s", 0, nil, nil)
			a := AgonesAllocator{Settings: agonesSettings(""), Identities: ids}
			var up *allocation.UpstreamError
			if !errors.As(a.upstreamError(tc.err, nil), &up) || up.Kind != tc.want || up.MayHaveAllocated != tc.orphan || !errors.Is(up, tc.err) {
				t.Fatalf("got %+v, want kind %d, orphan %v", up, tc.want, tc.orphan)
			}
		})
	}
}

func TestPrimaryPort(t *testing.T) {
	for _, tc := range []struct {
		ports map[string]int
		want  int
	}{{map[string]int{"query": 7000, "game": 7777}, 7777}, {map[string]int{"b": 7002, "a": 7001}, 7001}} {
		if got := primaryPort(tc.ports); got != tc.want {
			t.Errorf("primaryPort(%v) = %d, want %d", tc.ports, got, tc.want)
		}
	}
}

// Nested values are flattened as GameFabric's sidecar documents it.
func TestFlatten(t *testing.T) {
	var doc any
	_ = json.Unmarshal([]byte(`{"key":"value","n":2,"b":true,"z":null,"my-other-key":[true,[1,2],{"Sub":"value"}]}`), &doc)
	got := map[string]string{}
	for k, v := range doc.(map[string]any) {
		flatten(got, "p-"+k, v)
	}
	want := map[string]string{"p-key": "value", "p-n": "2", "p-b": "true", "p-z": "", "p-my-other-key.0": "true",
		"p-my-other-key.1.0": "1", "p-my-other-key.1.1": "2", "p-my-other-key.2.Sub": "value"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("flatten = %v, want %v", got, want)
	}
}
