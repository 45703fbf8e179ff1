package dashboard

import (
	"context"
	"fmt"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"net/http"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// matchTimeout bounds putting a match's event on the bus; placing it is
// MatchmakingFunction's business, which the page then watches.
const matchTimeout = 10 * time.Second

// matchForm is POST /api/match's body (make match sends it too).
type matchForm struct {
	Players int    `json:"players"` // 0 = stack.DefaultPlayers
	Near    string `json:"near"`    // "" = the first region
	// CustomEventData is the configuration's; nil = {"region":"<near>"}.
	CustomEventData *string `json:"customEventData"`
}

// handleMatch plays FlexMatch finding a match: its MatchmakingSucceeded
// event goes on the default bus, and MatchmakingFunction places it
// asynchronously; the answer names the match, whose game instance id is
// its matchId.
func (d *Dashboard) handleMatch(w http.ResponseWriter, r *http.Request) {
	if d.src.PlayMatch == nil {
		httpapi.WriteJSON(w, http.StatusNotImplemented, actionAnswer{Message: "this dashboard cannot play matches"})
		return
	}
	var f matchForm
	if err := readJSON(r, &f); err != nil {
		httpapi.WriteJSON(w, http.StatusBadRequest, actionAnswer{Message: err.Error()})
		return
	}
	if f.Players < 0 || f.Players > gameinstance.MaxMatchPlayers {
		httpapi.WriteJSON(w, http.StatusBadRequest, actionAnswer{Message: fmt.Sprintf("a match has 1 to %d players", gameinstance.MaxMatchPlayers)})
		return
	}
	if f.Players == 0 {
		f.Players = stack.DefaultPlayers
	}
	f.Near = strings.TrimSpace(f.Near)
	ctx, cancel := context.WithTimeout(r.Context(), matchTimeout)
	defer cancel()
	id, err := d.src.PlayMatch(ctx, stack.MatchOptions{Players: f.Players, Near: f.Near, CustomEventData: f.CustomEventData})
	if err != nil {
		httpapi.WriteJSON(w, http.StatusBadGateway, actionAnswer{Message: "the match's event was not put on the bus: " + err.Error()})
		return
	}
	near := ""
	if f.Near != "" {
		near = " near " + f.Near
	}
	httpapi.WriteJSON(w, http.StatusOK, actionAnswer{OK: true, GameInstanceID: id,
		Message: fmt.Sprintf("match %s of %d players%s is on the default bus: MatchmakingFunction places it", id, f.Players, near)})
}
