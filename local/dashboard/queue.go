package dashboard

import (
	"context"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
)

// Drains the page asks for: the button's 20 s is long enough to allocate
// into a dry region by hand and short enough to watch it refill; the API's
// queue timeouts end at 600 s, so a longer drain shows nothing more.
const (
	drainFor    = 20 * time.Second
	maxDrainFor = 600 * time.Second
)

// outcomeMessage says where an allocation stands after the API answered:
// placed, or queued with its deadline.
func outcomeMessage(a *allocclient.Allocation) string {
	msg := a.GameInstanceID + " is " + string(a.State)
	if a.Region != "" {
		msg += " in " + a.Region
	}
	if a.State == allocclient.StateQueued && !a.QueuedUntil.IsZero() {
		msg += " until " + a.QueuedUntil.UTC().Format(time.TimeOnly) + " UTC: no capacity yet, the service tries again as it frees"
	}
	return msg
}

// handleCancel cancels a Queued placement with DELETE, which answers it
// Failed with PLACEMENT_CANCELLED. Anything else is refused, because the
// same DELETE would end a game in play; should the placement be placed
// between the check and the DELETE, the DELETE ends that game instead,
// which is what cancelling it asked for too.
func (d *Dashboard) handleCancel(w http.ResponseWriter, r *http.Request) {
	f, ok := instanceForm(w, r)
	if !ok {
		return
	}
	ans := actionAnswer{GameInstanceID: f.GameInstanceID}
	ctx, cancel := context.WithTimeout(r.Context(), endTimeout)
	defer cancel()
	a, err := d.api.Get(ctx, f.GameInstanceID)
	if err == nil && a.State != allocclient.StateQueued {
		ans.Message = f.GameInstanceID + " is " + string(a.State) + ": only a Queued placement can be cancelled"
		httpapi.WriteJSON(w, http.StatusConflict, ans)
		return
	}
	if err == nil {
		a, err = d.api.End(ctx, f.GameInstanceID)
	}
	if err != nil {
		var status int
		status, ans.Code, ans.Message, ans.Allocation = apiFailure(err)
		httpapi.WriteJSON(w, status, ans)
		return
	}
	ans.OK, ans.Allocation, ans.Message = true, a, f.GameInstanceID+" is "+string(a.State)
	if a.Error != nil {
		ans.Code = string(a.Error.Code)
		ans.Message += " (" + string(a.Error.Code) + ")"
	}
	httpapi.WriteJSON(w, http.StatusOK, ans)
}

// drainForm is POST /api/drain's body.
type drainForm struct {
	Region  string `json:"region"`
	Seconds *int   `json:"seconds"` // nil = drainFor; 0 = refill now
}

// handleDrain runs a Region's emulated Allocator dry for a while, or
// refills it.
func (d *Dashboard) handleDrain(w http.ResponseWriter, r *http.Request) {
	var f drainForm
	if err := readJSON(r, &f); err != nil {
		httpapi.WriteJSON(w, http.StatusBadRequest, actionAnswer{Message: err.Error()})
		return
	}
	f.Region = strings.TrimSpace(f.Region)
	if d.src.Drain == nil {
		httpapi.WriteJSON(w, http.StatusNotImplemented, actionAnswer{Message: "this dashboard cannot drain regions (no emulated Allocators)"})
		return
	}
	period := drainFor
	if f.Seconds != nil {
		period = time.Duration(*f.Seconds) * time.Second
	}
	if f.Region == "" || period < 0 || period > maxDrainFor {
		httpapi.WriteJSON(w, http.StatusBadRequest, actionAnswer{Message: "a region and 0 to " + strconv.Itoa(int(maxDrainFor/time.Second)) + " seconds are required"})
		return
	}
	until, err := d.src.Drain(f.Region, period)
	if err != nil {
		httpapi.WriteJSON(w, http.StatusBadRequest, actionAnswer{Message: err.Error()})
		return
	}
	ans := actionAnswer{OK: true, Message: f.Region + "'s Allocator refilled: allocations there work again"}
	if !until.IsZero() {
		ans.Message = f.Region + "'s Allocator runs dry until " + until.UTC().Format(time.TimeOnly) +
			" UTC: allocate there with a queue timeout (and a whole server) to watch the placement wait"
	}
	httpapi.WriteJSON(w, http.StatusOK, ans)
}
