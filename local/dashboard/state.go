package dashboard

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
)

// Served is a Region an emulated Allocator serves, under its region string.
type Served struct {
	Region, Allocator, RegionString string
}

// Registered is a game server registered with an emulated Allocator and
// waiting to be allocated (an allocated server leaves the registry).
type Registered struct {
	Region    string // the Region's name (us-west), not the region string
	Allocator string
	Address   string
	Ports     map[string]int
	Priority  int
	ExpiresAt time.Time // its keep-alive window ends
}

// stateView is GET /api/state: everything the page shows. A source that
// could not be read leaves its part empty and says why in Problems.
type stateView struct {
	Now time.Time `json:"now"`
	API string    `json:"api"`
	// GameServers is where the game servers link back, when not API.
	GameServers string         `json:"gameServers,omitempty"`
	Regions     []regionView   `json:"regions"`
	Instances   []instanceView `json:"instances"`
	MoreExist   bool           `json:"moreInstances,omitempty"`
	Events      []eventView    `json:"events"`
	Problems    []string       `json:"problems,omitempty"`
	MaxShown    int            `json:"maxInstancesShown"`
	MaxEvents   int            `json:"maxEventsShown"`
	Versions    []string       `json:"versions,omitempty"` // suggestions for the allocate form
	Refreshing  string         `json:"refreshEvery"`
	// DrainFor is how long the Drain buttons drain, in seconds; 0 when
	// the dashboard cannot drain (no emulated Allocators), with no buttons.
	DrainFor int `json:"drainForSeconds"`
	// PlayMatch: the page offers to play a FlexMatch match.
	PlayMatch bool `json:"playMatch"`
}

type regionView struct {
	Region       string                   `json:"region"`
	Zone         string                   `json:"zone,omitempty"`
	Allocator    string                   `json:"allocator,omitempty"`
	RegionString string                   `json:"regionString,omitempty"`
	InPingCache  bool                     `json:"inPingCache"`
	PingTargets  []allocclient.PingTarget `json:"pingTargets"`
	RefreshedAt  time.Time                `json:"refreshedAt,omitzero"`
	Health       string                   `json:"health"`
	HealthSince  time.Time                `json:"healthSince,omitzero"`
	HealthReason string                   `json:"healthReason,omitempty"`
	Servers      []registered             `json:"servers"`
	InGame       int                      `json:"inGame"` // instances Allocated or Linked there
	// RoomServers are the game servers there that offered rooms.
	RoomServers []roomServerView `json:"roomServers"`
	// DrainedUntil: its Allocator runs dry until then (a drain).
	DrainedUntil time.Time `json:"drainedUntil,omitzero"`
}

type registered struct {
	Address   string         `json:"address"`
	Allocator string         `json:"allocator"`
	Ports     map[string]int `json:"ports,omitempty"`
	Priority  int            `json:"priority"`
	ExpiresAt time.Time      `json:"expiresAt"`
}

// eventView is one published event, read from its detail.
type eventView struct {
	Seq            uint64    `json:"seq"`
	Received       time.Time `json:"received"`
	DetailType     string    `json:"detailType"`
	GameInstanceID string    `json:"gameInstanceId,omitempty"`
	Region         string    `json:"region,omitempty"`
	PreviousState  string    `json:"previousState,omitempty"`
	State          string    `json:"state,omitempty"`
	// MatchID is a FlexMatch match's (its game instance's id too), and
	// Address where a match published again says its players connect.
	MatchID string `json:"matchId,omitempty"`
	Address string `json:"address,omitempty"`
	Line    string `json:"line"`
}

// maxEvents is how many of the latest events the page lists.
const maxEvents = 100

func (d *Dashboard) state(ctx context.Context) stateView {
	v := stateView{Now: time.Now().UTC(), API: d.src.APIURL, Regions: []regionView{}, Instances: []instanceView{},
		Events: []eventView{}, MaxShown: maxShown, MaxEvents: maxEvents, Versions: d.src.Versions, Refreshing: "1s"}
	if d.src.GameServerURL != d.src.APIURL {
		v.GameServers = d.src.GameServerURL
	}
	if d.src.Drain != nil {
		v.DrainFor = int(drainFor / time.Second)
	}
	v.PlayMatch = d.src.PlayMatch != nil
	listing, err := d.src.Instances(ctx)
	if err != nil {
		v.Problems = append(v.Problems, "game instances: "+err.Error())
	}
	if listing.Unreadable > 0 {
		v.Problems = append(v.Problems, fmt.Sprintf("game instances: %d items are not game instance records", listing.Unreadable))
	}
	v.MoreExist = listing.More
	inGame := map[string]int{}
	for _, r := range listing.Records {
		v.Instances = append(v.Instances, viewOf(r))
		if r.State == "Allocated" || r.State == "Linked" {
			inGame[r.Region]++
		}
	}
	regions, problems := d.regions(ctx)
	v.Problems = append(v.Problems, problems...)
	for i := range regions {
		regions[i].InGame = inGame[regions[i].Region]
	}
	v.Regions = regions
	if d.src.Events != nil {
		seen := d.src.Events()
		for i := len(seen) - 1; i >= 0 && len(v.Events) < maxEvents; i-- {
			v.Events = append(v.Events, eventOf(seen[i]))
		}
	}
	return v
}

// regions joins the API's regions (ping targets), the region health table
// and the emulated Allocators (what they serve, who is registered): a Region
// whose servers are all allocated drops out of the ping cache, yet is there.
func (d *Dashboard) regions(ctx context.Context) ([]regionView, []string) {
	var problems []string
	byName := map[string]*regionView{}
	get := func(name string) *regionView {
		if r, ok := byName[name]; ok {
			return r
		}
		r := &regionView{Region: name, PingTargets: []allocclient.PingTarget{}, Servers: []registered{}, RoomServers: []roomServerView{},
			Health: string(regionhealth.RegionInitialized)}
		byName[name] = r
		return r
	}
	for _, s := range d.src.Served {
		r := get(s.Region)
		r.Allocator, r.RegionString = s.Allocator, s.RegionString
	}
	api, health, err := d.cached.get(ctx, d.api, d.src.RegionHealth)
	if err != nil {
		problems = append(problems, err.Error())
	}
	for _, a := range api {
		r := get(a.Region)
		r.Zone, r.InPingCache, r.RefreshedAt = a.Zone, true, a.RefreshedAt
		if a.PingTargets != nil {
			r.PingTargets = a.PingTargets
		}
		if a.Health != "" {
			r.Health, r.HealthSince = a.Health, a.HealthSince
		}
	}
	for _, h := range health {
		r := get(h.Region)
		r.Health, r.HealthSince, r.HealthReason = string(h.EffectiveState()), h.Since, h.Reason
	}
	if d.src.Servers != nil {
		for _, s := range d.src.Servers() {
			r := get(s.Region)
			r.Servers = append(r.Servers, registered{Address: s.Address, Allocator: s.Allocator, Ports: s.Ports, Priority: s.Priority, ExpiresAt: s.ExpiresAt})
		}
	}
	problems = append(problems, d.roomServers(ctx, get)...)
	out := make([]regionView, 0, len(byName))
	for _, r := range byName {
		if d.src.DrainedUntil != nil {
			if until, ok := d.src.DrainedUntil(r.Region); ok {
				r.DrainedUntil = until
			}
		}
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Region < out[j].Region })
	return out, problems
}

func eventOf(e stack.SeenEvent) eventView {
	d := stack.Fields(e.Detail)
	v := eventView{Seq: e.Seq, Received: e.Received, DetailType: e.DetailType, GameInstanceID: d.GameInstanceID, MatchID: d.MatchID,
		Region: d.Region, PreviousState: d.PreviousState, State: d.State, Line: e.Line, Address: d.ConnectTo()}
	if v.GameInstanceID == "" {
		v.GameInstanceID = d.MatchID // a match's game instance is named by its matchId
	}
	return v
}

// roomServers adds the game servers that offered rooms to their regions
// (in the listing's order), and says what it could not read.
func (d *Dashboard) roomServers(ctx context.Context, region func(string) *regionView) []string {
	if d.src.GameServers == nil {
		return nil
	}
	var problems []string
	listing, err := d.src.GameServers(ctx)
	if err != nil {
		problems = append(problems, "game servers: "+err.Error())
	}
	if listing.Unreadable > 0 {
		problems = append(problems, fmt.Sprintf("game servers: %d items are not game server records", listing.Unreadable))
	}
	if listing.More {
		problems = append(problems, fmt.Sprintf("game servers: only the first %d records are shown", maxServersScanned))
	}
	for _, gs := range listing.Servers {
		r := region(gs.Region)
		r.RoomServers = append(r.RoomServers, roomServerOf(gs))
	}
	return problems
}
