package dashboard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
)

// Served is a Region an emulated Allocator serves, under its region
// string; Kind is the Allocator's (gamefabric, agones).
type Served struct {
	Region, Allocator, RegionString, Kind string
}

// Registered is a game server registered with an emulated Allocator and
// waiting to be allocated (an allocated server leaves the registry).
type Registered struct {
	Region    string         `json:"-"` // the Region's name (us-west), not the region string
	Allocator string         `json:"allocator"`
	Address   string         `json:"address"`
	Ports     map[string]int `json:"ports,omitempty"`
	Priority  int            `json:"priority"`
	ExpiresAt time.Time      `json:"expiresAt"` // its keep-alive window ends
}

// State is GET /api/state: everything the page shows (make match reads it
// too). A source that could not be read leaves its part empty and says why
// in Problems.
type State struct {
	Now time.Time `json:"now"`
	API string    `json:"api"`
	// GameServers is where the game servers link back, when not API.
	GameServers string       `json:"gameServers,omitempty"`
	Regions     []regionView `json:"regions"`
	Instances   []Instance   `json:"instances"`
	MoreExist   bool         `json:"moreInstances,omitempty"`
	Events      []Event      `json:"events"`
	Problems    []string     `json:"problems,omitempty"`
	MaxShown    int          `json:"maxInstancesShown"`
	Versions    []string     `json:"versions,omitempty"` // suggestions for the allocate form
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
	Kind         string                   `json:"kind,omitempty"` // the Allocator's
	RegionString string                   `json:"regionString,omitempty"`
	InPingCache  bool                     `json:"inPingCache"`
	PingTargets  []allocclient.PingTarget `json:"pingTargets"`
	RefreshedAt  time.Time                `json:"refreshedAt,omitzero"`
	Health       string                   `json:"health"`
	HealthSince  time.Time                `json:"healthSince,omitzero"`
	HealthReason string                   `json:"healthReason,omitempty"`
	Servers      []Registered             `json:"servers"`
	InGame       int                      `json:"inGame"` // instances Allocated or Linked there
	// RoomServers are the game servers there that offered rooms.
	RoomServers []roomServerView `json:"roomServers"`
	// DrainedUntil: its Allocator runs dry until then (a drain).
	DrainedUntil time.Time `json:"drainedUntil,omitzero"`
}

// Event is one published event, read from its detail.
type Event struct {
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

func (d *Dashboard) state(ctx context.Context) State {
	v := State{Now: time.Now().UTC(), API: d.src.APIURL, Instances: []Instance{}, Events: []Event{},
		MaxShown: maxShown, Versions: d.src.Versions, PlayMatch: d.src.PlayMatch != nil}
	if d.src.GameServerURL != d.src.APIURL {
		v.GameServers = d.src.GameServerURL
	}
	if d.src.Drain != nil {
		v.DrainFor = int(drainFor / time.Second)
	}
	listing, err := d.src.Instances(ctx)
	v.unread("game instance", err, listing.Unreadable)
	v.MoreExist = listing.More
	inGame := map[string]int{}
	for _, r := range listing.Records {
		v.Instances = append(v.Instances, viewOf(r))
		if r.State == "Allocated" || r.State == "Linked" {
			inGame[r.Region]++
		}
	}
	v.Regions = d.regions(ctx, &v, inGame)
	if d.src.Events != nil {
		seen := d.src.Events()
		for i := len(seen) - 1; i >= 0 && len(v.Events) < maxEvents; i-- {
			v.Events = append(v.Events, eventOf(seen[i]))
		}
	}
	return v
}

// unread adds to the problems what a listing of kind could not read.
func (v *State) unread(kind string, err error, unreadable int) {
	if err != nil {
		v.Problems = append(v.Problems, kind+"s: "+err.Error())
	}
	if unreadable > 0 {
		v.Problems = append(v.Problems, fmt.Sprintf("%ss: %d items are not %s records", kind, unreadable, kind))
	}
}

// regions joins the API's regions (ping targets), the region health table,
// the emulated Allocators (what they serve, who is registered) and the
// game servers that offered rooms (in the listing's order): a Region whose
// servers are all allocated drops out of the ping cache, yet is there.
func (d *Dashboard) regions(ctx context.Context, v *State, inGame map[string]int) []regionView {
	byName := map[string]*regionView{}
	get := func(name string) *regionView {
		if byName[name] == nil {
			byName[name] = &regionView{Region: name, PingTargets: []allocclient.PingTarget{}, Servers: []Registered{},
				RoomServers: []roomServerView{}, Health: string(regionhealth.RegionInitialized), InGame: inGame[name]}
		}
		return byName[name]
	}
	for _, s := range d.src.Served {
		r := get(s.Region)
		r.Allocator, r.RegionString, r.Kind = s.Allocator, s.RegionString, s.Kind
	}
	api, health, err := d.cached.get(ctx, d.api, d.src.RegionHealth)
	if err != nil {
		v.Problems = append(v.Problems, err.Error())
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
			r.Servers = append(r.Servers, s)
		}
	}
	if d.src.GameServers != nil {
		listing, err := d.src.GameServers(ctx)
		v.unread("game server", err, listing.Unreadable)
		if listing.More {
			v.Problems = append(v.Problems, fmt.Sprintf("game servers: only the first %d records are shown", maxServersScanned))
		}
		for _, gs := range listing.Records {
			r := get(gs.Region)
			r.RoomServers = append(r.RoomServers, roomServerOf(gs))
		}
	}
	out := make([]regionView, 0, len(byName))
	for _, r := range byName {
		if d.src.DrainedUntil != nil {
			if until, ok := d.src.DrainedUntil(r.Region); ok {
				r.DrainedUntil = until
			}
		}
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b regionView) int { return strings.Compare(a.Region, b.Region) })
	return out
}

func eventOf(e stack.SeenEvent) Event {
	d := stack.Fields(e.Detail)
	return Event{Seq: e.Seq, Received: e.Received, DetailType: e.DetailType, MatchID: d.MatchID,
		// A match's game instance is named by its matchId.
		GameInstanceID: cmp.Or(d.GameInstanceID, d.MatchID),
		Region:         d.Region, PreviousState: d.PreviousState, State: d.State, Line: e.Line, Address: d.ConnectTo()}
}

// regionsTTL is how long one read of the regions serves the page: they
// change on the ping refresher's schedule (minutes) and with allocation
// outcomes, while the page asks every second, each time an invocation of
// the regions function.
const regionsTTL = 2 * time.Second

// regionsCache holds the last read of GET /v1/regions and region health.
type regionsCache struct {
	mu     sync.Mutex
	at     time.Time
	api    []allocclient.Region
	health []regionhealth.Health
	err    error
}

func (c *regionsCache) get(ctx context.Context, api *allocclient.Client, health func(context.Context) ([]regionhealth.Health, error)) ([]allocclient.Region, []regionhealth.Health, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.at) < regionsTTL {
		return c.api, c.health, c.err
	}
	c.at, c.api, c.health, c.err = time.Now(), nil, nil, nil
	if list, err := api.Regions(ctx); err != nil {
		c.err = errors.New("GET /v1/regions: " + err.Error())
	} else {
		c.api = list.Regions
	}
	if health != nil {
		var err error
		if c.health, err = health(ctx); err != nil {
			c.err = errors.Join(c.err, errors.New("region health: "+err.Error()))
		}
	}
	return c.api, c.health, c.err
}
