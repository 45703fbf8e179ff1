package gameserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAgonesSDK answers GET /gameserver with its states in turn (the last
// repeats) and records every other call.
type fakeAgonesSDK struct {
	mu     sync.Mutex
	states []string // GameServer JSON documents
	calls  []string
}

func (f *fakeAgonesSDK) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	if r.Method == http.MethodGet && r.URL.Path == "/gameserver" {
		_, _ = w.Write([]byte(f.states[0]))
		if len(f.states) > 1 {
			f.states = f.states[1:]
		}
		return
	}
	f.calls = append(f.calls, r.Method+" "+r.URL.Path+" "+string(body))
	_, _ = w.Write([]byte("{}"))
}

func gameServerJSON(state string, annotations map[string]string) string {
	raw, _ := json.Marshal(map[string]any{"object_meta": map[string]any{"name": "gs-1", "annotations": annotations},
		"status": map[string]any{"state": state, "address": "10.0.0.1", "ports": []map[string]any{{"name": "game", "port": 7777}}}})
	return string(raw)
}

func payloadAnnotations(id string) map[string]string {
	return map[string]string{"agones.dev/sdk-payload-GameInstanceId": id, "agones.dev/sdk-payload-PartnerGameToken": "tok-" + id + strings.Repeat("x", 32),
		"agones.dev/sdk-payload-pragmaBackendAddress": "https://backend.example", "agones.dev/sdk-payload-ServerArgs": "-map=x",
		"agones.dev/sdk-payload-PartnerSocialToken": ""}
}

func TestAgonesPayload(t *testing.T) {
	bad := payloadAnnotations("gi-2")
	bad["agones.dev/sdk-payload-pragmaBackendAddress"] = "not a url"
	bad["agones.dev/sdk-payload-last-applied"] = "gi-2"
	partial := payloadAnnotations("gi-3") // GameFabric's sidecar, still writing
	delete(partial, "agones.dev/sdk-payload-pragmaBackendAddress")
	tests := []struct {
		name    string
		states  []string
		seen    string
		wantID  string
		wantErr error
	}{
		{"waits for Ready to become Allocated", []string{gameServerJSON("Ready", nil), gameServerJSON("Allocated", payloadAnnotations("gi-1"))}, "", "gi-1", nil},
		{"a server with rooms waits for its next session", []string{gameServerJSON("Allocated", payloadAnnotations("gi-1")),
			gameServerJSON("Allocated", payloadAnnotations("gi-2"))}, "gi-1", "gi-2", nil},
		{"an unusable payload fails at once", []string{gameServerJSON("Allocated", bad)}, "", "", ErrInvalidPayload},
		{"a payload still being written is waited for", []string{gameServerJSON("Allocated", partial),
			gameServerJSON("Allocated", payloadAnnotations("gi-3"))}, "", "gi-3", nil},
		{"allocated without a payload is waited for until ctx ends", []string{gameServerJSON("Allocated", nil)}, "", "", context.DeadlineExceeded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(&fakeAgonesSDK{states: tc.states})
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			sdk := &AgonesSDK{URL: srv.URL, Prefix: "agones.dev/sdk-payload-"}
			p, err := sdk.WaitForPayload(ctx, tc.seen, 5*time.Millisecond)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || p.GameInstanceID != tc.wantID || p.BackendAddress != "https://backend.example" || p.ServerArgs != "-map=x" {
				t.Fatalf("payload = %v, %v", p, err)
			}
		})
	}
}

func TestAgonesSDKCalls(t *testing.T) {
	fake := &fakeAgonesSDK{states: []string{gameServerJSON("Ready", nil)}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	sdk := &AgonesSDK{URL: srv.URL}
	ctx := context.Background()
	for _, call := range []func(context.Context) error{sdk.Ready, sdk.Health, sdk.Shutdown,
		func(ctx context.Context) error { return sdk.AddToCounter(ctx, "rooms", -1) }} {
		if err := call(ctx); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"POST /ready {}", "POST /health {}", "POST /shutdown {}", `PATCH /v1beta1/counters/rooms {"countDiff":"-1"}`}
	if strings.Join(fake.calls, "|") != strings.Join(want, "|") {
		t.Fatalf("calls = %q, want %q", fake.calls, want)
	}
}

func TestAgonesSDKFromEnv(t *testing.T) {
	tests := []struct {
		env              map[string]string
		wantURL, wantErr string
	}{
		{map[string]string{}, "", ""},
		{map[string]string{"ALLOC_PAYLOAD_ANNOTATION": "payload-"}, "http://localhost:9358", ""},
		{map[string]string{"ALLOC_PAYLOAD_ANNOTATION": "payload-", "AGONES_SDK_HTTP_PORT": "9400"}, "http://localhost:9400", ""},
		{map[string]string{"ALLOC_PAYLOAD_ANNOTATION": "payload-", "AGONES_SDK_HTTP_PORT": "x"}, "", "must be a port"},
		{map[string]string{"ALLOC_PAYLOAD_ANNOTATION": "payload-", "ALLOC_PAYLOAD_FILE": "/p.json"}, "", "mutually exclusive"},
	}
	for _, tc := range tests {
		sdk, err := AgonesSDKFromEnv(func(k string) string { return tc.env[k] })
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: err = %v, want %q", tc.env, err, tc.wantErr)
			}
		case tc.wantURL == "":
			if sdk != nil || err != nil {
				t.Errorf("%v: %+v, %v; want none", tc.env, sdk, err)
			}
		case err != nil || sdk.URL != tc.wantURL || sdk.Prefix != "agones.dev/sdk-payload-":
			t.Errorf("%v: %+v, %v", tc.env, sdk, err)
		}
	}
}

// A GameLift placement's game session comes back from its flattened
// annotations; any other allocation has none.
func TestAgonesGameSession(t *testing.T) {
	ann := payloadAnnotations("gi-gl")
	sdk := &AgonesSDK{Prefix: "agones.dev/sdk-payload-"}
	gs := AgonesGameServer{}
	gs.Status.State, gs.ObjectMeta.Annotations = AgonesStateAllocated, ann
	if p, err := sdk.Payload(gs, ""); err != nil || p.GameSession != nil {
		t.Fatalf("plain payload: %+v, %v", p.GameSession, err)
	}
	for k, v := range map[string]string{"GameSessionName": "arena", "GameSessionData": "42", "MaximumPlayerSessionCount": "8",
		"GameProperties.0.Key": "mode", "GameProperties.0.Value": "ctf", "GameProperties.1.Key": "map", "GameProperties.1.Value": "x",
		"DesiredPlayerSessions.0.PlayerId": "p1", "DesiredPlayerSessions.0.PlayerData": "true"} {
		ann["agones.dev/sdk-payload-"+k] = v
	}
	p, err := sdk.Payload(gs, "")
	g := p.GameSession
	if err != nil || g == nil || g.Name != "arena" || g.Data != "42" || g.MaximumPlayerSessionCount == nil || *g.MaximumPlayerSessionCount != 8 ||
		len(g.Properties) != 2 || g.Properties[1].Value != "x" || len(g.DesiredPlayerSessions) != 1 || g.DesiredPlayerSessions[0].PlayerData != "true" {
		t.Fatalf("game session = %+v, %v", g, err)
	}
}
