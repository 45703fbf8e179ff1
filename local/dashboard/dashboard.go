// Package dashboard is make dev's web page (docs/local.md): the regions,
// game servers, game instances and events of the local stack, with buttons
// to allocate, end a game as its player would, cancel a queued placement,
// drain a region's Allocator and play a FlexMatch match.
//
// The page is static HTML, JS and CSS embedded in the binary (no build
// step, nothing fetched from elsewhere); it polls GET /api/state every
// second. It serves loopback only and refuses requests whose Host or Origin
// is not loopback, so no other web page can drive it.
package dashboard

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/player"
	"github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
	"github.com/gamefabric-alloc/allocsvc/shared/store/regiontable"
)

//go:embed static
var static embed.FS

// Sources are what the dashboard reads and acts through.
type Sources struct {
	// APIURL is the local HTTP API: regions, allocate, and a game
	// instance's server for End.
	APIURL string
	// GameServerURL is where game servers link back (their
	// pragmaBackendAddress): a function URL, or APIURL. Shown, not called.
	GameServerURL string
	// Instances lists the game instances, newest first.
	Instances func(context.Context) (Listing[gameinstance.Record], error)
	// GameServers lists the game servers that offered rooms; nil shows none.
	GameServers func(context.Context) (Listing[gameinstance.GameServer], error)
	// RegionHealth lists the region health table; nil leaves it to the API.
	RegionHealth func(context.Context) ([]regionhealth.Health, error)
	// Served are the Regions the emulated Allocators serve.
	Served []Served
	// Servers are the game servers registered with the emulated Allocators.
	Servers func() []Registered
	// Events are the latest published events, oldest first.
	Events func() []stack.SeenEvent
	// Versions are gameServerVersion suggestions for the allocate form.
	Versions []string
	// Win sends the player's IWON; default player.SendIWONFor.
	Win func(ctx context.Context, address, gameInstanceID string) (player.Outcome, error)
	// Drain runs a Region's Allocator dry for d (0 refills it) and says
	// until when; nil shows no Drain buttons.
	Drain func(region string, d time.Duration) (time.Time, error)
	// DrainedUntil is when a drained Region refills; ok is false when it
	// is not drained.
	DrainedUntil func(region string) (until time.Time, ok bool)
	// PlayMatch plays FlexMatch finding a match (stack.PutMatch) and
	// returns its id; nil shows no Play a match button.
	PlayMatch func(ctx context.Context, o stack.MatchOptions) (matchID string, err error)
}

// Dashboard serves the page and its JSON.
type Dashboard struct {
	src    Sources
	api    *allocclient.Client
	cached regionsCache
	mux    *http.ServeMux
	// cop rejects writes a browser sends on behalf of another site.
	cop *http.CrossOriginProtection
}

// Timeouts of the actions: an allocation may take the API's whole 30 s;
// ending waits for the game server to record the end (it answers GAME OVER
// then), which its own end call bounds at 4 s.
const (
	allocateTimeout = 35 * time.Second
	endTimeout      = 20 * time.Second
	stateTimeout    = 10 * time.Second
	maxRequestBody  = 4 << 10
)

// New builds the dashboard's handler; src.APIURL must be an http(s) URL.
func New(src Sources) (*Dashboard, error) {
	if src.Win == nil {
		src.Win = player.SendIWONFor
	}
	if src.Instances == nil {
		src.Instances = func(context.Context) (Listing[gameinstance.Record], error) {
			return Listing[gameinstance.Record]{}, errors.New("no game instance source")
		}
	}
	// One try per call: the page shows every answer as it came, and a
	// person clicks again.
	api, err := allocclient.New(allocclient.Options{BaseURL: src.APIURL, MaxAttempts: 1, HTTPClient: &http.Client{Timeout: allocateTimeout}})
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	d := &Dashboard{src: src, api: api, cop: http.NewCrossOriginProtection(), mux: http.NewServeMux()}
	files, _ := fs.Sub(static, "static")
	d.mux.Handle("GET /", http.FileServerFS(files))
	d.mux.HandleFunc("GET /api/state", d.handleState)
	d.mux.HandleFunc("POST /api/allocate", d.handleAllocate)
	d.mux.HandleFunc("POST /api/end", d.onInstance(d.handleEnd))
	d.mux.HandleFunc("POST /api/cancel", d.onInstance(d.handleCancel))
	d.mux.HandleFunc("POST /api/drain", d.handleDrain)
	d.mux.HandleFunc("POST /api/match", d.handleMatch)
	return d, nil
}

// ServeHTTP serves loopback callers only (see guard).
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if msg := guard(r, d.cop); msg != "" {
		httpapi.WriteJSON(w, http.StatusForbidden, map[string]string{"error": msg})
		return
	}
	// The page loads nothing from elsewhere; the policy makes that a rule.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Cache-Control", "no-store")
	d.mux.ServeHTTP(w, r)
}

// guard says why r is refused, "" when it may be served. The dashboard
// listens on loopback, but a browser will still carry requests there for
// other pages: a Host that is not loopback is DNS rebinding (a name that
// resolves to 127.0.0.1), and a write must be same-origin JSON, which no
// other page can send without the browser asking first.
func guard(r *http.Request, crossOrigin *http.CrossOriginProtection) string {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if ip := net.ParseIP(host); !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
		return "the dashboard answers only to a loopback Host (127.0.0.1, [::1], localhost)"
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return ""
	}
	if err := crossOrigin.Check(r); err != nil {
		return "cross-origin request refused"
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return "the body must be application/json"
	}
	return ""
}

func (d *Dashboard) handleState(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), stateTimeout)
	defer cancel()
	httpapi.WriteJSON(w, http.StatusOK, d.state(ctx))
}

// Answer is what the page hears back from an action.
type Answer struct {
	OK             bool                    `json:"ok"`
	GameInstanceID string                  `json:"gameInstanceId"`
	Message        string                  `json:"message"`
	Code           string                  `json:"code,omitempty"`
	Allocation     *allocclient.Allocation `json:"allocation,omitempty"`
}

// answer writes ans with status, ans.Message set to msg.
func answer(w http.ResponseWriter, status int, ans Answer, msg string) {
	ans.Message = msg
	httpapi.WriteJSON(w, status, ans)
}

// apiFailed answers err from the API: the API's own status, code and
// body when it answered, 502 when it could not be reached.
func apiFailed(w http.ResponseWriter, ans Answer, err error) {
	var e *allocclient.Error
	if !errors.As(err, &e) {
		answer(w, http.StatusBadGateway, ans, fmt.Sprintf("the local API does not answer: %v", err))
		return
	}
	ans.Code, ans.Allocation = e.Code, e.Allocation
	answer(w, e.Status, ans, cmp.Or(e.Message, http.StatusText(e.Status)))
}

func readJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxRequestBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errors.New("the body must be a small JSON object: " + err.Error())
	}
	return nil
}

// onInstance serves an action on one game instance within endTimeout: it
// reads the body's {"gameInstanceId"} (400 for a bad one), GETs that
// instance from the API (answering the API's problem) and hands it to act.
func (d *Dashboard) onInstance(act func(context.Context, http.ResponseWriter, Answer, *allocclient.Allocation)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), endTimeout)
		defer cancel()
		var f struct {
			GameInstanceID string `json:"gameInstanceId"`
		}
		if err := readJSON(r, &f); err != nil || gameinstance.IDProblem(f.GameInstanceID) != "" {
			answer(w, http.StatusBadRequest, Answer{}, "a valid gameInstanceId is required")
			return
		}
		ans := Answer{GameInstanceID: f.GameInstanceID}
		if a, err := d.api.Get(ctx, f.GameInstanceID); err != nil {
			apiFailed(w, ans, err)
		} else {
			act(ctx, w, ans, a)
		}
	}
}

// Server is a running dashboard.
type Server struct {
	URL string // http://127.0.0.1:<port>/
	srv *http.Server
}

// Close stops serving.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

// Start serves the dashboard of s on 127.0.0.1:port (0 = any free port).
func Start(s *stack.Stack, port int) (*Server, error) {
	src, err := stackSources(s)
	if err != nil {
		return nil, err
	}
	d, err := New(src)
	if err != nil {
		return nil, err
	}
	return Serve(d, port)
}

// Serve serves d on 127.0.0.1:port (0 = any free port), never beyond
// loopback: its buttons allocate and end games.
func Serve(d *Dashboard, port int) (*Server, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	srv := &http.Server{Handler: d, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: time.Minute}
	go func() { _ = srv.Serve(ln) }()
	return &Server{URL: "http://" + ln.Addr().String() + "/", srv: srv}, nil
}

// stackSources reads a running local stack: its API, its tables in
// DynamoDB Local, its emulated Allocators' registries and its events.
func stackSources(s *stack.Stack) (Sources, error) {
	instances, health, servers := s.Tables["GameInstancesTable"], s.Tables["RegionHealthTable"], s.Tables["GameServersTable"]
	if instances == "" {
		return Sources{}, errors.New("dashboard: the template has no GameInstancesTable")
	}
	db := harness.NewDynamoDB(harness.AWSConfig(), s.DynamoDB)
	src := Sources{
		APIURL:        s.APIURL,
		GameServerURL: s.GameServerURL,
		Instances: func(ctx context.Context) (Listing[gameinstance.Record], error) {
			return ScanInstances(ctx, db, instances)
		},
		Servers:      func() []Registered { return registeredIn(s.Allocators, s.Agones) },
		Events:       func() []stack.SeenEvent { return s.RecentEvents(0) },
		Drain:        s.Drain,
		DrainedUntil: s.DrainedUntil,
		PlayMatch:    s.PutMatch,
	}
	if servers != "" {
		src.GameServers = func(ctx context.Context) (Listing[gameinstance.GameServer], error) {
			return ScanGameServers(ctx, db, servers)
		}
	}
	if health != "" {
		src.RegionHealth = regiontable.New(db, health, regionhealth.BreakerPolicy{}).List
	}
	for _, a := range s.Allocators {
		for region, str := range a.Regions {
			src.Served = append(src.Served, Served{Region: region, Allocator: a.Name, RegionString: str, Kind: "gamefabric"})
		}
	}
	if g := s.Agones; g != nil {
		src.Served = append(src.Served, Served{Region: g.Region, Allocator: "Agones cluster", Kind: "agones"})
	}
	if env, set := s.Refs["FallbackEnvironment"], s.Refs["FallbackArmadaSet"]; env != "" && set != "" {
		src.Versions = []string{env + "::" + set}
	}
	return src, nil
}

// registeredIn lists every Allocator's registered game servers under the
// Region names they stand for: an Allocator's region string maps back to
// its Region; the first Allocator serves any other Region under its name.
// The Agones cluster's are its Ready GameServers.
func registeredIn(allocators []*stack.Allocator, g *stack.Agones) []Registered {
	var out []Registered
	if g != nil {
		for _, gs := range g.Ready() {
			ports := map[string]int{}
			for _, p := range gs.Ports {
				ports[p.Name] = int(p.Port)
			}
			out = append(out, Registered{Region: g.Region, Allocator: "Agones GameServer " + gs.Name, Address: gs.Address + ":" + strconv.Itoa(ports["game"]), Ports: ports})
		}
	}
	for _, a := range allocators {
		names := map[string]string{}
		for region, str := range a.Regions {
			names[str] = region
		}
		for _, srv := range a.Emulator.Servers() {
			out = append(out, Registered{Region: cmp.Or(names[srv.Region], srv.Region), Allocator: a.Name, Address: srv.Address, Ports: srv.Ports,
				Priority: srv.Priority, ExpiresAt: srv.ExpiresAt})
		}
	}
	return out
}
