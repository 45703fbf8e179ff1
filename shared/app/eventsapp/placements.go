package eventsapp

import (
	"context"
	"errors"
	"fmt"

	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/eventcatalog"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// Placements reads what GameLiftApiFunction kept of a GameLift placement
// (GameSessionPlacementsTable).
type Placements interface {
	Get(ctx context.Context, id string) (gameinstance.GameSessionPlacement, error)
}

// placementEvents follows each event that ends a GameLift placement
// (placed, or failed) with GameLift's own event for it, from what was kept
// of the placement. A placement not kept is published without it
// (logged); a store that cannot say is an error, so the stream record is
// handed back.
func placementEvents(ctx context.Context, placements Placements, evs []eventcatalog.Event) ([]eventcatalog.Event, error) {
	if placements == nil {
		return evs, nil
	}
	out := make([]eventcatalog.Event, 0, len(evs)+1)
	for _, e := range evs {
		out = append(out, e)
		ends := e.Type == eventcatalog.GameServerAllocated || e.Type == eventcatalog.AllocationFailed || e.Instance != nil && recovered(e)
		if e.Instance == nil || e.Instance.PlacementID == "" || !ends {
			continue
		}
		p, err := placements.Get(ctx, e.Instance.PlacementID)
		switch {
		case errors.Is(err, gameinstance.ErrNotFound):
			logging.FromContext(ctx).Error("placement not kept; its GameLift event is not published", "placementId", e.Instance.PlacementID, "event", e.Type)
			continue
		case err != nil:
			return nil, fmt.Errorf("placement %s: %w", e.Instance.PlacementID, err)
		}
		if ev, ok := eventcatalog.QueuePlacement(p, e, recovered(e)); ok {
			out = append(out, ev)
		}
	}
	return out, nil
}

// KeptIn is what the deployment keeps in db: MatchesTable and
// GameSessionPlacementsTable, each nil when the configuration names none.
// Retention only matters for writes; EventsFunction only reads.
func KeptIn(db store.MatchesDB, cfg config.Events) Kept {
	var k Kept
	if cfg.MatchesTable != "" {
		k.Matches = store.NewMatches(db, cfg.MatchesTable, 0)
	}
	if cfg.PlacementsTable != "" {
		k.Placements = store.NewGameSessionPlacements(db, cfg.PlacementsTable, 0)
	}
	return k
}
