package gameserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// A game server on an Agones cluster (its own, behind the allocation
// service's "kind": "agones" Allocator, or GameFabric's with its sidecar's
// ALLOC_PAYLOAD_ANNOTATION) finds its payload in its GameServer's
// annotations, one per payload field, which it reads through the Agones
// SDK's local REST endpoint (the sidecar Agones runs beside every game
// server, on AGONES_SDK_HTTP_PORT).

// AgonesSDK calls the Agones SDK's REST endpoint: GET /gameserver, POST
// /ready, /health and /shutdown, and the Counters of its beta API.
type AgonesSDK struct {
	// URL is the endpoint, http://localhost:<AGONES_SDK_HTTP_PORT>.
	URL string
	// Prefix is the payload's annotation prefix: "agones.dev/sdk-" +
	// ALLOC_PAYLOAD_ANNOTATION (the allocation service's default,
	// agones.dev/sdk-payload-).
	Prefix string
	// HTTP defaults to a client with DefaultRequestTimeout.
	HTTP *http.Client
}

// Agones' own names and defaults.
const (
	AgonesSDKAnnotationPrefix = "agones.dev/sdk-" // what SetAnnotation prefixes, and the sidecar's keys begin with
	AgonesDefaultSDKPort      = 9358              // AGONES_SDK_HTTP_PORT's default
	AgonesStateAllocated      = "Allocated"
	// maxGameServerBytes bounds what GameServer reads: annotations are
	// limited to 256 KiB by Kubernetes.
	maxGameServerBytes = 512 << 10
)

// AgonesGameServer is the SDK's GameServer, the members a game server
// needs (its JSON uses the proto's snake_case names).
type AgonesGameServer struct {
	ObjectMeta struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
		Labels      map[string]string `json:"labels"`
	} `json:"object_meta"`
	Status struct {
		State   string `json:"state"`
		Address string `json:"address"`
		Ports   []struct {
			Name string `json:"name"`
			Port int    `json:"port"`
		} `json:"ports"`
	} `json:"status"`
}

// GameServer reads the game server's state and metadata.
func (a *AgonesSDK) GameServer(ctx context.Context) (AgonesGameServer, error) {
	var gs AgonesGameServer
	raw, err := a.call(ctx, http.MethodGet, "/gameserver", nil)
	if err == nil {
		if err = json.Unmarshal(raw, &gs); err != nil {
			err = fmt.Errorf("agones sdk: GET /gameserver: the answer is not a GameServer: %w", err)
		}
	}
	return gs, err
}

// Ready marks the game server Ready to be allocated.
func (a *AgonesSDK) Ready(ctx context.Context) error { return a.post(ctx, "/ready") }

// Health is one health ping (Agones marks a server that stops them Unhealthy).
func (a *AgonesSDK) Health(ctx context.Context) error { return a.post(ctx, "/health") }

// Shutdown asks Agones to shut the game server down.
func (a *AgonesSDK) Shutdown(ctx context.Context) error { return a.post(ctx, "/shutdown") }

// AddToCounter changes a Counter by diff: -1 when a session on a server
// with a rooms Counter ends, so that Agones offers its room again.
func (a *AgonesSDK) AddToCounter(ctx context.Context, name string, diff int64) error {
	body := fmt.Sprintf(`{"countDiff":"%d"}`, diff)
	_, err := a.call(ctx, http.MethodPatch, "/v1beta1/counters/"+url.PathEscape(name), []byte(body))
	return err
}

func (a *AgonesSDK) post(ctx context.Context, path string) error {
	_, err := a.call(ctx, http.MethodPost, path, []byte("{}"))
	return err
}

func (a *AgonesSDK) call(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(a.URL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("agones sdk: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	client := a.HTTP
	if client == nil {
		client = &http.Client{Timeout: DefaultRequestTimeout}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("agones sdk: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxGameServerBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("agones sdk: %s %s: %w", method, path, err)
	case len(raw) > maxGameServerBytes:
		return nil, fmt.Errorf("agones sdk: %s %s: the answer exceeds %d bytes", method, path, maxGameServerBytes)
	case resp.StatusCode/100 != 2:
		return nil, fmt.Errorf("agones sdk: %s %s answered %d", method, path, resp.StatusCode)
	}
	return raw, nil
}

// Payload is the allocation payload in the game server's annotations, once
// it is Allocated with one: ErrIncompletePayload while it is not (yet), or
// while its GameInstanceId is seen (a server with rooms waits for its next
// session's); ErrInvalidPayload when it holds one that is not usable.
// GameFabric's sidecar writes the annotations one by one after the state
// turns Allocated, then its "last-applied" marker: an unusable payload
// without the marker is still being written.
func (a *AgonesSDK) Payload(gs AgonesGameServer, seen string) (Payload, error) {
	ann := gs.ObjectMeta.Annotations
	field := func(name string) string { return ann[a.Prefix+name] }
	id := field("GameInstanceId")
	if gs.Status.State != AgonesStateAllocated || id == "" || id == seen {
		return Payload{}, ErrIncompletePayload
	}
	p := Payload{GameInstanceID: id, PartnerGameToken: field("PartnerGameToken"), PartnerSocialToken: field("PartnerSocialToken"),
		BackendAddress: field("pragmaBackendAddress"), ServerArgs: field("ServerArgs"), GameSession: a.gameSession(ann)}
	err := p.Validate()
	if _, marked := ann[a.Prefix+"last-applied"]; err != nil && !marked && ann[AgonesSDKAnnotationPrefix+"last-applied"] == "" {
		return Payload{}, ErrIncompletePayload
	}
	return p, err
}

// gameSession is a GameLift placement's game session from the annotations,
// its lists flattened as the sidecar writes them (GameProperties.0.Key,
// DesiredPlayerSessions.1.PlayerId); nil when there is none.
func (a *AgonesSDK) gameSession(ann map[string]string) *gameinstance.GameSession {
	at := func(name string) (string, bool) { v, ok := ann[a.Prefix+name]; return v, ok }
	var gs gameinstance.GameSession
	found := false
	if v, ok := at("GameSessionName"); ok {
		gs.Name, found = v, true
	}
	if v, ok := at("GameSessionData"); ok {
		gs.Data, found = v, true
	}
	if v, ok := at("MaximumPlayerSessionCount"); ok {
		if n, err := strconv.Atoi(v); err == nil {
			gs.MaximumPlayerSessionCount, found = &n, true
		}
	}
	for _, p := range flattenedPairs(at, "GameProperties", "Key", "Value") {
		gs.Properties, found = append(gs.Properties, gameinstance.GameProperty{Key: p[0], Value: p[1]}), true
	}
	for _, p := range flattenedPairs(at, "DesiredPlayerSessions", "PlayerId", "PlayerData") {
		gs.DesiredPlayerSessions, found = append(gs.DesiredPlayerSessions, gameinstance.PlayerSession{PlayerID: p[0], PlayerData: p[1]}), true
	}
	if !found {
		return nil
	}
	return &gs
}

// WaitForPayload polls the SDK until the game server is Allocated with a
// payload whose GameInstanceId is not seen ("" the first time; a server
// with rooms passes its last session's, and gets the next). An unusable
// payload fails at once; an SDK that cannot be reached is polled again
// until ctx ends.
func (a *AgonesSDK) WaitForPayload(ctx context.Context, seen string, poll time.Duration) (Payload, error) {
	if poll <= 0 {
		poll = DefaultPayloadPoll
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		gs, err := a.GameServer(ctx)
		if err == nil {
			var p Payload
			if p, err = a.Payload(gs, seen); !errors.Is(err, ErrIncompletePayload) {
				return p, err
			}
		}
		select {
		case <-ctx.Done():
			return Payload{}, fmt.Errorf("waiting for the allocation payload in the annotations (last: %v): %w", err, ctx.Err())
		case <-t.C:
		}
	}
}

// AgonesSDKFromEnv is the SDK endpoint the environment names: the payload
// is in annotations when ALLOC_PAYLOAD_ANNOTATION is set (GameFabric's
// sidecar's setting: "payload-" for the allocation service's default
// prefix), read at AGONES_SDK_HTTP_PORT (Agones sets it; 9358 by default).
// nil without ALLOC_PAYLOAD_ANNOTATION: the payload is a file
// (ALLOC_PAYLOAD_FILE).
func AgonesSDKFromEnv(getenv func(string) string) (*AgonesSDK, error) {
	annotation := strings.TrimSpace(getenv("ALLOC_PAYLOAD_ANNOTATION"))
	if annotation == "" {
		return nil, nil
	}
	if getenv("ALLOC_PAYLOAD_FILE") != "" {
		return nil, errors.New("ALLOC_PAYLOAD_ANNOTATION and ALLOC_PAYLOAD_FILE are mutually exclusive: the payload is in annotations or in a file")
	}
	port := AgonesDefaultSDKPort
	if v := strings.TrimSpace(getenv("AGONES_SDK_HTTP_PORT")); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("AGONES_SDK_HTTP_PORT must be a port, got %q", v)
		}
		port = p
	}
	return &AgonesSDK{URL: "http://localhost:" + strconv.Itoa(port), Prefix: AgonesSDKAnnotationPrefix + annotation}, nil
}

// flattenedPairs reads a list of two-field objects as the sidecar flattens
// it (list.0.first, list.0.second, list.1.first, ...), up to the first
// index without its first field.
func flattenedPairs(at func(string) (string, bool), list, first, second string) [][2]string {
	var out [][2]string
	for i := 0; ; i++ {
		prefix := list + "." + strconv.Itoa(i) + "."
		a, ok := at(prefix + first)
		if !ok {
			return out
		}
		b, _ := at(prefix + second)
		out = append(out, [2]string{a, b})
	}
}
