package allocators

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// The domain's request becomes GameFabric's documented body, and its
// answer a server without GameFabric's callback token.
func TestAllocatorSpeaksGameFabric(t *testing.T) {
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &body)
		_, _ = w.Write([]byte(`{"address":"10.0.0.1:7777","ip":"10.0.0.1","ports":{"game":7777},"token":"callback-secret"}`))
	}))
	defer srv.Close()
	a := Allocator{Client: gamefabric.NewClient(srv.Client(), srv.URL)}
	res, err := a.Allocate(context.Background(), "t", allocation.UpstreamRequest{Region: "gf-us", Environment: "prod", ArmadaSet: "arena",
		Payload: allocation.Payload{GameInstanceID: "gi-1", PartnerGameToken: "p", PragmaBackendAddress: "https://b"}})
	if err != nil {
		t.Fatal(err)
	}
	want := allocation.Allocated{Server: &gameinstance.Server{Address: "10.0.0.1:7777", IP: "10.0.0.1", Ports: map[string]int{"game": 7777}}}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("allocated = %+v, want %+v", res, want)
	}
	wantBody := map[string]any{"region": "gf-us", "attributes": map[string]any{"env": "prod", "armadaset": "arena"},
		"payload": map[string]any{"GameInstanceId": "gi-1", "PartnerGameToken": "p", "PartnerSocialToken": "", "pragmaBackendAddress": "https://b", "ServerArgs": ""}}
	if !reflect.DeepEqual(body, wantBody) {
		t.Fatalf("body = %v, want %v", body, wantBody)
	}
}

func TestUpstreamError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want allocation.UpstreamError
	}{
		{"status", &gamefabric.Error{Kind: gamefabric.KindStatus, Status: 429, Message: "slow down", Body: "b", RetryAfter: time.Second},
			allocation.UpstreamError{Kind: allocation.UpstreamStatus, Status: 429, Message: "slow down", Body: "b", RetryAfter: time.Second}},
		{"gateway timeout may have allocated", &gamefabric.Error{Kind: gamefabric.KindStatus, Status: 504, Message: "m"},
			allocation.UpstreamError{Kind: allocation.UpstreamStatus, Status: 504, Message: "m", MayHaveAllocated: true}},
		{"timeout", &gamefabric.Error{Kind: gamefabric.KindTimeout, Message: "m"},
			allocation.UpstreamError{Kind: allocation.UpstreamTimeout, Message: "m", MayHaveAllocated: true}},
		{"unsent", &gamefabric.Error{Kind: gamefabric.KindTransport, Message: "refused", Unsent: true},
			allocation.UpstreamError{Kind: allocation.UpstreamTransport, Message: "refused"}},
		{"undecodable", &gamefabric.Error{Kind: gamefabric.KindDecode, Message: "m"},
			allocation.UpstreamError{Kind: allocation.UpstreamDecode, Message: "m", MayHaveAllocated: true}},
		{"not ours", errors.New("boom"), allocation.UpstreamError{Kind: allocation.UpstreamTransport, Message: "boom", MayHaveAllocated: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got *allocation.UpstreamError
			if !errors.As(upstreamError(tc.err), &got) {
				t.Fatalf("%v is not an UpstreamError", upstreamError(tc.err))
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("the cause is not kept")
			}
			got.Err = nil
			if *got != tc.want {
				t.Errorf("got %+v, want %+v", *got, tc.want)
			}
		})
	}
}
