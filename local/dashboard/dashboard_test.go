package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/player"
	"github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
)

// fakeAPI answers the allocation service's routes from what a test sets.
type fakeAPI struct {
	mu        sync.Mutex
	regions   string            // GET /v1/regions body; "" = 500
	records   map[string]string // GET /v1/allocations/{id} bodies
	allocate  func(body map[string]string) (int, string)
	allocated []map[string]string
	bodies    []string // every POST body as sent
	// del answers DELETE /v1/allocations/{id}; deleted lists the ids.
	del     func(id string) (int, string)
	deleted []string
}

func (f *fakeAPI) start(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/v1/regions":
			if f.regions == "" {
				w.WriteHeader(http.StatusInternalServerError)
				fmt.Fprint(w, `{"error":{"code":"INTERNAL","message":"internal error"}}`)
				return
			}
			fmt.Fprint(w, f.regions)
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/allocations/"):
			body, ok := f.records[strings.TrimPrefix(r.URL.Path, "/v1/allocations/")]
			if !ok {
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprint(w, `{"error":{"code":"NOT_FOUND","message":"no game instance"}}`)
				return
			}
			fmt.Fprint(w, body)
		case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/v1/allocations/") && f.del != nil:
			id := strings.TrimPrefix(r.URL.Path, "/v1/allocations/")
			f.deleted = append(f.deleted, id)
			status, answer := f.del(id)
			w.WriteHeader(status)
			fmt.Fprint(w, answer)
		case r.Method == http.MethodPost && r.URL.Path == "/v1/allocations":
			raw, _ := io.ReadAll(r.Body)
			var body map[string]string
			_ = json.Unmarshal(raw, &body) // the string fields; numbers and booleans are in bodies
			f.allocated, f.bodies = append(f.allocated, body), append(f.bodies, string(raw))
			status, answer := f.allocate(body)
			w.WriteHeader(status)
			fmt.Fprint(w, answer)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The listings the sources answer.
type (
	instanceListing = Listing[gameinstance.Record]
	serverListing   = Listing[gameinstance.GameServer]
)

// newDash is New(src), with an API URL nothing answers when src has none.
func newDash(t *testing.T, src Sources) *Dashboard {
	t.Helper()
	if src.APIURL == "" {
		src.APIURL = "http://127.0.0.1:9"
	}
	d, err := New(src)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// do sends a request the way the page does (same-origin, loopback Host).
func do(t *testing.T, h http.Handler, method, path, body string) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, "http://127.0.0.1:8089"+path, strings.NewReader(body))
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "http://127.0.0.1:8089")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var doc map[string]any
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, rec.Body)
		}
	}
	return rec, doc
}

func TestStaticPageIsSelfContained(t *testing.T) {
	d := newDash(t, Sources{})
	external := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//|@import|url\(\s*["']?(https?:)?//|fonts\.googleapis|cdn`)
	for _, tc := range []struct{ path, contentType, must string }{
		{"/", "text/html", `<script src="app.js"`},
		{"/app.js", "text/javascript", "replaceChildren"},
		{"/style.css", "text/css", ".badge-linked"},
	} {
		rec, _ := do(t, d, http.MethodGet, tc.path, "")
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), tc.contentType) {
			t.Fatalf("GET %s: %d %s", tc.path, rec.Code, rec.Header().Get("Content-Type"))
		}
		body := rec.Body.String()
		if !strings.Contains(body, tc.must) {
			t.Errorf("GET %s lacks %q", tc.path, tc.must)
		}
		if m := external.FindString(body); m != "" {
			t.Errorf("GET %s loads something from elsewhere: %q", tc.path, m)
		}
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q", tc.path, csp)
		}
	}
	// Data goes into the page as text only.
	rec, _ := do(t, d, http.MethodGet, "/app.js", "")
	for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("} {
		if strings.Contains(rec.Body.String(), sink) {
			t.Errorf("app.js uses %s", sink)
		}
	}
}

func TestGuard(t *testing.T) {
	tests := []struct {
		name                 string
		method, host         string
		contentType, site    string
		origin               string
		wantRefused, wantMsg string
	}{
		{name: "page from 127.0.0.1", method: "GET", host: "127.0.0.1:8089"},
		{name: "page from localhost", method: "GET", host: "localhost:8089"},
		{name: "page from [::1]", method: "GET", host: "[::1]:8089"},
		{name: "DNS rebinding", method: "GET", host: "evil.example:8089", wantMsg: "loopback Host"},
		{name: "a LAN address", method: "GET", host: "192.168.1.5:8089", wantMsg: "loopback Host"},
		{name: "same-origin JSON write", method: "POST", host: "127.0.0.1:8089", contentType: "application/json", site: "same-origin", origin: "http://127.0.0.1:8089"},
		{name: "curl's JSON write", method: "POST", host: "127.0.0.1:8089", contentType: "application/json; charset=utf-8"},
		{name: "another site's write", method: "POST", host: "127.0.0.1:8089", contentType: "application/json", site: "cross-site", origin: "http://evil.example", wantMsg: "cross-origin"},
		{name: "another origin without Sec-Fetch-Site", method: "POST", host: "127.0.0.1:8089", contentType: "application/json", origin: "http://evil.example", wantMsg: "cross-origin"},
		{name: "a form post", method: "POST", host: "127.0.0.1:8089", contentType: "text/plain", wantMsg: "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/api/end", nil)
			r.Host = tt.host
			for k, v := range map[string]string{"Content-Type": tt.contentType, "Sec-Fetch-Site": tt.site, "Origin": tt.origin} {
				if v != "" {
					r.Header.Set(k, v)
				}
			}
			got := guard(r, http.NewCrossOriginProtection())
			if (got == "") != (tt.wantMsg == "") || !strings.Contains(got, tt.wantMsg) {
				t.Fatalf("guard = %q, want %q", got, tt.wantMsg)
			}
		})
	}
	// Refused requests are answered 403 before any route.
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/api/state", nil)
	r.Host = "evil.example"
	newDash(t, Sources{}).ServeHTTP(rec, r)
	if rec.Code != http.StatusForbidden {
		t.Fatalf("rebound request: %d", rec.Code)
	}
}

func TestState(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	api := &fakeAPI{regions: `{"regions":[{"region":"us-west","zone":"US_WEST","pingTargets":[{"address":"127.0.0.1","port":7001,"protocol":"UDP"}],"refreshedAt":"2026-01-02T03:00:00Z","health":"Deployed"}]}`}
	src := Sources{
		APIURL: api.start(t),
		Instances: func(context.Context) (instanceListing, error) {
			return instanceListing{Records: []gameinstance.Record{
				{GameInstanceID: "gi-2", State: gameinstance.StateLinked, Region: "us-west", FallbackUsed: true, CreatedAt: t0,
					Fingerprint:          gameinstance.Fingerprint{DesiredRegion: "eu-central-1"},
					Server:               &gameinstance.Server{Address: "127.0.0.1:7001", IP: "127.0.0.1", Ports: map[string]int{"game": 7001}},
					PartnerGameTokenHash: "secret-hash", ClaimID: "claim-1",
					Attempts: []gameinstance.Attempt{{Region: "eu-central-1", Status: 404, Body: "upstream body"}, {Region: "us-west", Status: 200}}},
				{GameInstanceID: "gi-1", State: gameinstance.StateEnded, Region: "us-west", EndReason: "IWON", CreatedAt: t0.Add(-time.Minute)},
			}, Unreadable: 1}, nil
		},
		RegionHealth: func(context.Context) ([]regionhealth.Health, error) {
			return []regionhealth.Health{{Region: "eu-central-1", State: regionhealth.RegionUnhealthy, Reason: regionhealth.BecauseNoPingTargets, Since: t0}}, nil
		},
		Served: []Served{{Region: "us-west", Allocator: "us", RegionString: "dev-us-west"}, {Region: "eu-central-1", Allocator: "eu", RegionString: "dev-eu-central-1"}},
		Servers: func() []Registered {
			return []Registered{{Region: "us-west", Allocator: "us", Address: "127.0.0.1:7003", Ports: map[string]int{"game": 7003}}}
		},
		Events: func() []stack.SeenEvent {
			return []stack.SeenEvent{
				{Seq: 1, Line: "event GameServerAllocated gi-2 Allocating → Allocated", Published: stack.Published{DetailType: "GameServerAllocated",
					Detail: json.RawMessage(`{"gameInstanceId":"gi-2","state":"Allocated","previousState":"Allocating"}`)}},
				{Seq: 2, Line: "event GameServerLinked gi-2 Allocated → Linked", Published: stack.Published{DetailType: "GameServerLinked",
					Detail: json.RawMessage(`{"gameInstanceId":"gi-2","state":"Linked","previousState":"Allocated"}`)}},
			}
		},
		Versions: []string{"prag::sample-game-armada-set"},
	}
	rec, doc := do(t, newDash(t, src), http.MethodGet, "/api/state", "")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /api/state: %d %s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	for _, secret := range []string{"secret-hash", "claim-1", "upstream body"} {
		if strings.Contains(body, secret) {
			t.Errorf("the state shows %q", secret)
		}
	}
	var st State
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Instances) != 2 || st.Instances[0].GameInstanceID != "gi-2" || st.Instances[0].DesiredRegion != "eu-central-1" ||
		len(st.Instances[0].Attempts) != 2 || st.Instances[0].Attempts[0].Status != 404 || st.Instances[1].EndReason != "IWON" {
		t.Errorf("instances = %+v", st.Instances)
	}
	if len(st.Regions) != 2 {
		t.Fatalf("regions = %+v", st.Regions)
	}
	eu, us := st.Regions[0], st.Regions[1]
	if us.Region != "us-west" || !us.InPingCache || us.Health != "Deployed" || us.Zone != "US_WEST" || len(us.PingTargets) != 1 ||
		us.Allocator != "us" || us.RegionString != "dev-us-west" || len(us.Servers) != 1 || us.InGame != 1 {
		t.Errorf("us-west = %+v", us)
	}
	if eu.Region != "eu-central-1" || eu.InPingCache || eu.Health != "Unhealthy" || eu.HealthReason != "NoPingTargets" || len(eu.Servers) != 0 {
		t.Errorf("eu-central-1 (absent from the ping cache, Unhealthy in the table) = %+v", eu)
	}
	if len(st.Events) != 2 || st.Events[0].Seq != 2 || st.Events[0].State != "Linked" || st.Events[0].GameInstanceID != "gi-2" {
		t.Errorf("events, newest first = %+v", st.Events)
	}
	if len(st.Problems) != 1 || !strings.Contains(st.Problems[0], "1 items are not game instance records") {
		t.Errorf("problems = %v", st.Problems)
	}
	if doc["versions"] == nil {
		t.Errorf("no version suggestions")
	}

	// Sources that fail leave their part empty and say why.
	src.Instances = func(context.Context) (instanceListing, error) { return instanceListing{}, errors.New("table gone") }
	api.mu.Lock()
	api.regions = ""
	api.mu.Unlock()
	_, doc = do(t, newDash(t, src), http.MethodGet, "/api/state", "")
	problems := fmt.Sprint(doc["problems"])
	if !strings.Contains(problems, "game instances: table gone") || !strings.Contains(problems, "GET /v1/regions: 500 INTERNAL") {
		t.Errorf("problems = %s", problems)
	}
	if regions := doc["regions"].([]any); len(regions) != 2 {
		t.Errorf("the Allocators' regions are still listed: %v", regions)
	}
}

func TestAllocate(t *testing.T) {
	api := &fakeAPI{allocate: func(b map[string]string) (int, string) {
		if b["desiredRegion"] == "nowhere" {
			return http.StatusServiceUnavailable, `{"error":{"code":"NO_CAPACITY","message":"no region had a game server"}}`
		}
		return http.StatusCreated, fmt.Sprintf(`{"gameInstanceId":%q,"state":"Allocated","region":%q,"attempts":[]}`, b["gameInstanceId"], b["desiredRegion"])
	}}
	d := newDash(t, Sources{APIURL: api.start(t)})
	tests := []struct {
		name, body string
		wantStatus int
		wantID     string // "" = generated
		wantMsg    string
		wantCode   string
	}{
		{"given id", `{"gameInstanceId":"gi-7","region":"us-west","version":"prag::set"}`, 200, "gi-7", "gi-7 is Allocated in us-west", ""},
		{"generated id", `{"region":" us-west ","version":""}`, 200, "", " is Allocated in us-west", ""},
		{"no capacity", `{"gameInstanceId":"gi-8","region":"nowhere"}`, 503, "gi-8", "no region had a game server", "NO_CAPACITY"},
		{"not JSON", `region=us-west`, 400, "", "JSON", ""},
		{"unknown field", `{"regoin":"us-west"}`, 400, "", "unknown field", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, doc := do(t, d, http.MethodPost, "/api/allocate", tt.body)
			code, _ := doc["code"].(string)
			if rec.Code != tt.wantStatus || !strings.Contains(fmt.Sprint(doc["message"]), tt.wantMsg) || code != tt.wantCode {
				t.Fatalf("%d %v", rec.Code, doc)
			}
			if rec.Code == 400 {
				return
			}
			id := doc["gameInstanceId"].(string)
			if tt.wantID != "" && id != tt.wantID || gameinstance.IDProblem(id) != "" {
				t.Errorf("gameInstanceId %q", id)
			}
			api.mu.Lock()
			sent := api.allocated[len(api.allocated)-1]
			api.mu.Unlock()
			if sent["gameInstanceId"] != id || strings.TrimSpace(sent["desiredRegion"]) != sent["desiredRegion"] {
				t.Errorf("the API got %v", sent)
			}
		})
	}
}

func TestEnd(t *testing.T) {
	api := &fakeAPI{records: map[string]string{
		"gi-linked":   `{"gameInstanceId":"gi-linked","state":"Linked","server":{"address":"127.0.0.1:7001","ip":"127.0.0.1","ports":{"game":7002}}}`,
		"gi-notready": `{"gameInstanceId":"gi-notready","state":"Allocated","server":{"address":"127.0.0.1:7005","ip":"127.0.0.1","ports":{"game":7005}}}`,
		"gi-ended":    `{"gameInstanceId":"gi-ended","state":"Ended","server":{"address":"127.0.0.1:7003","ip":"127.0.0.1","ports":{"game":7003}}}`,
		"gi-down":     `{"gameInstanceId":"gi-down","state":"Linked","server":{"address":"127.0.0.1:7004","ip":"127.0.0.1","ports":{"game":7004}}}`,
	}}
	var won []string
	d := newDash(t, Sources{APIURL: api.start(t), Win: func(_ context.Context, addr, id string) (player.Outcome, error) {
		won = append(won, id+"@"+addr)
		switch id {
		case "gi-notready":
			return player.Outcome{}, fmt.Errorf("game port %s: %w", addr, player.ErrNotReady)
		case "gi-down":
			return player.Outcome{}, errors.New("connect to the game port: refused")
		}
		return player.Outcome{GameOver: true}, nil
	}})
	tests := []struct {
		id         string
		wantStatus int
		wantMsg    string
		wantWin    string // "" = no IWON sent
	}{
		{"gi-linked", 200, "IWON sent to 127.0.0.1:7002; the server answered GAME OVER", "gi-linked@127.0.0.1:7002"},
		{"gi-notready", 409, "not letting players in", "gi-notready@127.0.0.1:7005"},
		{"gi-ended", 409, "gi-ended is already Ended", ""},
		{"gi-down", 502, "refused", "gi-down@127.0.0.1:7004"},
		{"gi-unknown", 404, "no game instance", ""},
		{"bad id!", 400, "a valid gameInstanceId is required", ""},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			won = nil
			body, _ := json.Marshal(map[string]string{"gameInstanceId": tt.id})
			rec, doc := do(t, d, http.MethodPost, "/api/end", string(body))
			if rec.Code != tt.wantStatus || !strings.Contains(fmt.Sprint(doc["message"]), tt.wantMsg) || doc["ok"] != (tt.wantStatus == 200) {
				t.Fatalf("%d %v", rec.Code, doc)
			}
			if got := strings.Join(won, ","); got != tt.wantWin {
				t.Errorf("IWON sent %q, want %q", got, tt.wantWin)
			}
		})
	}
}

func TestNewGameInstanceID(t *testing.T) {
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	a, b := newGameInstanceID(now), newGameInstanceID(now)
	if a == b || !strings.HasPrefix(a, "dash-070809-") || gameinstance.IDProblem(a) != "" {
		t.Fatalf("ids %q, %q", a, b)
	}
}

func TestServeIsLoopbackOnly(t *testing.T) {
	s, err := Serve(newDash(t, Sources{}), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") || !strings.HasSuffix(s.URL, "/") {
		t.Fatalf("URL %s", s.URL)
	}
	resp, err := http.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "local dashboard") {
		t.Fatalf("%d %s", resp.StatusCode, page)
	}
}

// The state says where game servers link back when that is not the API
// (a function URL), so the page can show it beside the API.
func TestStateNamesWhereGameServersLinkBack(t *testing.T) {
	api := (&fakeAPI{regions: `{"regions":[]}`}).start(t)
	for _, tc := range []struct{ gameServers, want string }{
		{"http://127.0.0.1:3001", "http://127.0.0.1:3001"}, // GameServerEndpoint FunctionUrl
		{api, ""}, // HttpApi: the API itself, not repeated
	} {
		src := Sources{APIURL: api, GameServerURL: tc.gameServers,
			Instances: func(context.Context) (instanceListing, error) { return instanceListing{}, nil }}
		_, doc := do(t, newDash(t, src), http.MethodGet, "/api/state", "")
		if got, _ := doc["gameServers"].(string); got != tc.want {
			t.Errorf("game servers at %s: gameServers = %q, want %q", tc.gameServers, got, tc.want)
		}
	}
}
