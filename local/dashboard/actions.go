package dashboard

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/player"
	"github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Drains the page asks for: the button's 20 s is long enough to allocate
// into a dry region by hand and short enough to watch it refill; the API's
// queue timeouts end at 600 s, so a longer drain shows nothing more.
// matchTimeout bounds putting a match's event on the bus; placing it is
// MatchmakingFunction's business, which the page then watches.
const (
	drainFor     = 20 * time.Second
	maxDrainFor  = 600 * time.Second
	matchTimeout = 10 * time.Second
)

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

func (d *Dashboard) handleAllocate(w http.ResponseWriter, r *http.Request) {
	var f allocateForm
	if err := readJSON(r, &f); err != nil {
		answer(w, http.StatusBadRequest, Answer{}, err.Error())
		return
	}
	ans := Answer{GameInstanceID: strings.TrimSpace(f.GameInstanceID)}
	if ans.GameInstanceID == "" {
		ans.GameInstanceID = newGameInstanceID(time.Now())
	}
	ctx, cancel := context.WithTimeout(r.Context(), allocateTimeout)
	defer cancel()
	a, err := d.api.Allocate(ctx, allocclient.AllocateRequest{GameInstanceID: ans.GameInstanceID, DesiredRegion: strings.TrimSpace(f.Region),
		GameServerVersion: strings.TrimSpace(f.Version), QueueTimeoutSeconds: f.QueueTimeoutSeconds, Dedicated: f.Dedicated})
	if err != nil {
		apiFailed(w, ans, err)
		return
	}
	ans.OK, ans.Allocation = true, a
	msg := a.GameInstanceID + " is " + string(a.State)
	if a.Region != "" {
		msg += " in " + a.Region
	}
	if a.State == allocclient.StateQueued && !a.QueuedUntil.IsZero() {
		msg += " until " + a.QueuedUntil.UTC().Format(time.TimeOnly) + " UTC: no capacity yet, the service tries again as it frees"
	}
	answer(w, http.StatusOK, ans, msg)
}

// newGameInstanceID names an instance the dashboard allocates: when, and
// random enough that two clicks in one second differ.
func newGameInstanceID(now time.Time) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return "dash-" + now.UTC().Format("150405") + "-" + hex.EncodeToString(b)
}

// handleEnd ends a game the way its player would: IWON to the game port of
// the instance's server, which then ends it through the API.
func (d *Dashboard) handleEnd(ctx context.Context, w http.ResponseWriter, ans Answer, a *allocclient.Allocation) {
	addr, err := player.Target(a)
	if err != nil {
		answer(w, http.StatusConflict, ans, err.Error())
		return
	}
	out, err := d.src.Win(ctx, addr, ans.GameInstanceID)
	switch {
	case errors.Is(err, player.ErrNotReady) || errors.Is(err, player.ErrGameOver) || errors.Is(err, player.ErrOtherGame):
		answer(w, http.StatusConflict, ans, err.Error())
	case err != nil:
		answer(w, http.StatusBadGateway, ans, err.Error())
	case out.GameOver:
		ans.OK = true
		answer(w, http.StatusOK, ans, "IWON sent to "+addr+"; the server answered GAME OVER")
	default:
		ans.OK = true
		answer(w, http.StatusOK, ans, "IWON sent to "+addr)
	}
}

// handleCancel cancels a Queued placement with DELETE, which answers it
// Failed with PLACEMENT_CANCELLED. Anything else is refused, because the
// same DELETE would end a game in play; should the placement be placed
// between the check and the DELETE, the DELETE ends that game instead,
// which is what cancelling it asked for too.
func (d *Dashboard) handleCancel(ctx context.Context, w http.ResponseWriter, ans Answer, a *allocclient.Allocation) {
	id := ans.GameInstanceID
	if a.State != allocclient.StateQueued {
		answer(w, http.StatusConflict, ans, id+" is "+string(a.State)+": only a Queued placement can be cancelled")
		return
	}
	a, err := d.api.End(ctx, id)
	if err != nil {
		apiFailed(w, ans, err)
		return
	}
	ans.OK, ans.Allocation = true, a
	msg := id + " is " + string(a.State)
	if a.Error != nil {
		ans.Code = string(a.Error.Code)
		msg += " (" + ans.Code + ")"
	}
	answer(w, http.StatusOK, ans, msg)
}

func (d *Dashboard) handleDrain(w http.ResponseWriter, r *http.Request) {
	var f struct {
		Region  string `json:"region"`
		Seconds *int   `json:"seconds"` // nil = drainFor; 0 = refill now
	}
	if err := readJSON(r, &f); err != nil {
		answer(w, http.StatusBadRequest, Answer{}, err.Error())
		return
	}
	if d.src.Drain == nil {
		answer(w, http.StatusNotImplemented, Answer{}, "this dashboard cannot drain regions (no emulated Allocators)")
		return
	}
	region, period := strings.TrimSpace(f.Region), drainFor
	if f.Seconds != nil {
		period = time.Duration(*f.Seconds) * time.Second
	}
	if region == "" || period < 0 || period > maxDrainFor {
		answer(w, http.StatusBadRequest, Answer{}, fmt.Sprintf("a region and 0 to %d seconds are required", int(maxDrainFor/time.Second)))
		return
	}
	until, err := d.src.Drain(region, period)
	if err != nil {
		answer(w, http.StatusBadRequest, Answer{}, err.Error())
		return
	}
	msg := region + "'s Allocator refilled: allocations there work again"
	if !until.IsZero() {
		msg = region + "'s Allocator runs dry until " + until.UTC().Format(time.TimeOnly) +
			" UTC: allocate there with a queue timeout (and a whole server) to watch the placement wait"
	}
	answer(w, http.StatusOK, Answer{OK: true}, msg)
}

// MatchForm is POST /api/match's body, which make match sends too.
type MatchForm struct {
	Players int    `json:"players"`        // 0 = stack.DefaultPlayers
	Near    string `json:"near,omitempty"` // "" = the first region
	// CustomEventData is the configuration's; nil = {"region":"<near>"}.
	CustomEventData *string `json:"customEventData,omitempty"`
}

// handleMatch plays FlexMatch finding a match: its MatchmakingSucceeded
// event goes on the default bus, and MatchmakingFunction places it
// asynchronously; the answer names the match, whose game instance id is
// its matchId.
func (d *Dashboard) handleMatch(w http.ResponseWriter, r *http.Request) {
	if d.src.PlayMatch == nil {
		answer(w, http.StatusNotImplemented, Answer{}, "this dashboard cannot play matches")
		return
	}
	var f MatchForm
	if err := readJSON(r, &f); err != nil {
		answer(w, http.StatusBadRequest, Answer{}, err.Error())
		return
	}
	if f.Players < 0 || f.Players > gameinstance.MaxMatchPlayers {
		answer(w, http.StatusBadRequest, Answer{}, fmt.Sprintf("a match has 1 to %d players", gameinstance.MaxMatchPlayers))
		return
	}
	o := stack.MatchOptions{Players: cmp.Or(f.Players, stack.DefaultPlayers), Near: strings.TrimSpace(f.Near), CustomEventData: f.CustomEventData}
	ctx, cancel := context.WithTimeout(r.Context(), matchTimeout)
	defer cancel()
	id, err := d.src.PlayMatch(ctx, o)
	if err != nil {
		answer(w, http.StatusBadGateway, Answer{}, "the match's event was not put on the bus: "+err.Error())
		return
	}
	near := ""
	if o.Near != "" {
		near = " near " + o.Near
	}
	answer(w, http.StatusOK, Answer{OK: true, GameInstanceID: id},
		fmt.Sprintf("match %s of %d players%s is on the default bus: MatchmakingFunction places it", id, o.Players, near))
}
