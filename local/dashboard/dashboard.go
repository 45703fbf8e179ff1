// Package dashboard is make dev's web page: the regions with their health,
// ping targets and the game servers registered in each, the game servers
// that offered rooms with the games holding them, the game instances as
// their states change with the decision trace of each allocation, and the
// lifecycle events as they are published; with a form to allocate (with a
// queue timeout too), a button to end a game the way its player would, one
// to cancel a queued placement, and one to drain a region's Allocator for
// a while so a queued placement can be watched waiting; and one to play a
// FlexMatch match, whose instance and re-published event it then shows.
//
// The page is static HTML, JS and CSS embedded in the binary (no build
// step, nothing fetched from elsewhere); it polls GET /api/state every
// second. It serves loopback only and refuses requests whose Host or Origin
// is not loopback, so no other web page can drive it.
package dashboard

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/player"
	"github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
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
	Instances func(context.Context) (Listing, error)
	// GameServers lists the game servers that offered rooms; nil shows none.
	GameServers func(context.Context) (ServerListing, error)
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
	api    apiCalls
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

// New builds the dashboard's handler.
func New(src Sources) *Dashboard {
	if src.Win == nil {
		src.Win = player.SendIWONFor
	}
	if src.Instances == nil {
		src.Instances = func(context.Context) (Listing, error) { return Listing{}, errors.New("no game instance source") }
	}
	d := &Dashboard{src: src, cop: http.NewCrossOriginProtection()}
	if c, err := newAPIClient(src.APIURL); err != nil {
		d.api = failedClient{err: err}
	} else {
		d.api = c
	}
	files, _ := fs.Sub(static, "static")
	d.mux = http.NewServeMux()
	d.mux.Handle("GET /", http.FileServerFS(files))
	d.mux.HandleFunc("GET /api/state", d.handleState)
	d.mux.HandleFunc("POST /api/allocate", d.handleAllocate)
	d.mux.HandleFunc("POST /api/end", d.handleEnd)
	d.mux.HandleFunc("POST /api/cancel", d.handleCancel)
	d.mux.HandleFunc("POST /api/drain", d.handleDrain)
	d.mux.HandleFunc("POST /api/match", d.handleMatch)
	return d
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

func (d *Dashboard) handleState(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), stateTimeout)
	defer cancel()
	httpapi.WriteJSON(w, http.StatusOK, d.state(ctx))
}

// allocateForm is POST /api/allocate's body.
type allocateForm struct {
	GameInstanceID string `json:"gameInstanceId"` // "" = one is generated
	Region         string `json:"region"`
	Version        string `json:"version"`
	// QueueTimeoutSeconds lets the placement wait for capacity (nil = the
	// deployment's QUEUE_TIMEOUT); the API checks its range.
	QueueTimeoutSeconds *int `json:"queueTimeoutSeconds"`
	// Dedicated asks for a whole server: a drained region's Allocator is
	// then the only way in, rooms on servers in play are not.
	Dedicated bool `json:"dedicated"`
}

// actionAnswer is what the page hears back from an action.
type actionAnswer struct {
	OK             bool                    `json:"ok"`
	GameInstanceID string                  `json:"gameInstanceId"`
	Message        string                  `json:"message"`
	Code           string                  `json:"code,omitempty"`
	Allocation     *allocclient.Allocation `json:"allocation,omitempty"`
}

func (d *Dashboard) handleAllocate(w http.ResponseWriter, r *http.Request) {
	var f allocateForm
	if err := readJSON(r, &f); err != nil {
		httpapi.WriteJSON(w, http.StatusBadRequest, actionAnswer{Message: err.Error()})
		return
	}
	f.GameInstanceID, f.Region, f.Version = strings.TrimSpace(f.GameInstanceID), strings.TrimSpace(f.Region), strings.TrimSpace(f.Version)
	if f.GameInstanceID == "" {
		f.GameInstanceID = newGameInstanceID(time.Now())
	}
	ctx, cancel := context.WithTimeout(r.Context(), allocateTimeout)
	defer cancel()
	alloc, err := d.api.Allocate(ctx, allocclient.AllocateRequest{GameInstanceID: f.GameInstanceID, DesiredRegion: f.Region,
		GameServerVersion: f.Version, QueueTimeoutSeconds: f.QueueTimeoutSeconds, Dedicated: f.Dedicated})
	ans := actionAnswer{OK: err == nil, GameInstanceID: f.GameInstanceID, Allocation: alloc}
	if err != nil {
		var status int
		status, ans.Code, ans.Message, ans.Allocation = apiFailure(err)
		httpapi.WriteJSON(w, status, ans)
		return
	}
	ans.Message = outcomeMessage(alloc)
	httpapi.WriteJSON(w, http.StatusOK, ans)
}

// endForm is POST /api/end's body.
type endForm struct {
	GameInstanceID string `json:"gameInstanceId"`
}

// handleEnd ends a game the way its player would: IWON to the game port of
// the instance's server, which then ends it through the API.
func (d *Dashboard) handleEnd(w http.ResponseWriter, r *http.Request) {
	f, ok := instanceForm(w, r)
	if !ok {
		return
	}
	ans := actionAnswer{GameInstanceID: f.GameInstanceID}
	ctx, cancel := context.WithTimeout(r.Context(), endTimeout)
	defer cancel()
	a, err := d.api.Get(ctx, f.GameInstanceID)
	if err != nil {
		var status int
		status, ans.Code, ans.Message, _ = apiFailure(err)
		httpapi.WriteJSON(w, status, ans)
		return
	}
	if err := player.Winnable(f.GameInstanceID, string(a.State)); err != nil {
		ans.Message = err.Error()
		httpapi.WriteJSON(w, http.StatusConflict, ans)
		return
	}
	if a.Server == nil {
		ans.Message = f.GameInstanceID + " has no game server in its record"
		httpapi.WriteJSON(w, http.StatusConflict, ans)
		return
	}
	addr, err := player.GameAddress(a.Server.IP, a.Server.Address, a.Server.Ports)
	if err != nil {
		ans.Message = err.Error()
		httpapi.WriteJSON(w, http.StatusConflict, ans)
		return
	}
	out, err := d.src.Win(ctx, addr, f.GameInstanceID)
	if err != nil {
		ans.Message = err.Error()
		status := http.StatusBadGateway
		if errors.Is(err, player.ErrNotReady) || errors.Is(err, player.ErrGameOver) || errors.Is(err, player.ErrOtherGame) {
			status = http.StatusConflict
		}
		httpapi.WriteJSON(w, status, ans)
		return
	}
	ans.OK, ans.Message = true, "IWON sent to "+addr
	if out.GameOver {
		ans.Message += "; the server answered GAME OVER"
	}
	httpapi.WriteJSON(w, http.StatusOK, ans)
}

// newGameInstanceID names an instance the dashboard allocates: when, and
// random enough that two clicks in one second differ.
func newGameInstanceID(now time.Time) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return "dash-" + now.UTC().Format("150405") + "-" + hex.EncodeToString(b)
}

func readJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxRequestBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errors.New("the body must be a small JSON object: " + err.Error())
	}
	return nil
}

// instanceForm reads an action's {"gameInstanceId"}; a bad one is answered
// 400 and ok is false.
func instanceForm(w http.ResponseWriter, r *http.Request) (f endForm, ok bool) {
	if err := readJSON(r, &f); err != nil || gameinstance.IDProblem(f.GameInstanceID) != "" {
		httpapi.WriteJSON(w, http.StatusBadRequest, actionAnswer{Message: "a valid gameInstanceId is required"})
		return f, false
	}
	return f, true
}
