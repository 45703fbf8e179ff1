package metrics

import (
	"sort"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// RoomsInUse emits, per region, the rooms in use on the game servers that
// offered rooms (RoomsInUse), the free rooms of those still accepting
// (RoomsFree) and how many accept (GameServersAccepting): gauges, one line
// per region, from one read of every server's record. Regions come from
// servers GameFabric allocated, so no caller can invent one.
func RoomsInUse(e *EMF, servers []gameinstance.GameServer) {
	type tally struct{ inUse, free, accepting float64 }
	byRegion := map[string]*tally{}
	for _, gs := range servers {
		t := byRegion[gs.Region]
		if t == nil {
			t = &tally{}
			byRegion[gs.Region] = t
		}
		t.inUse += float64(gs.InUse)
		if gs.Accepting {
			t.accepting++
			t.free += float64(max(gs.Free(), 0))
		}
	}
	regions := make([]string, 0, len(byRegion))
	for r := range byRegion {
		regions = append(regions, r)
	}
	sort.Strings(regions)
	for _, r := range regions {
		t := byRegion[r]
		e.Emit(map[string]string{"Region": r}, Metric{"RoomsInUse", t.inUse, "Count"}, Metric{"RoomsFree", t.free, "Count"},
			Metric{"GameServersAccepting", t.accepting, "Count"})
	}
}
