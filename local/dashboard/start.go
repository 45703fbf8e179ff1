package dashboard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
	"github.com/gamefabric-alloc/allocsvc/shared/store/regiontable"
)

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
		Servers: func() []Registered { return registeredIn(s.Allocators) },
		Events:  func() []stack.SeenEvent { return s.RecentEvents(0) },
		// The emulated Allocators run dry on a click (stack.Drain).
		Drain:        s.Drain,
		DrainedUntil: s.DrainedUntil,
		// A MatchmakingSucceeded event on moto's default bus (make match).
		PlayMatch: s.PutMatch,
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
			src.Served = append(src.Served, Served{Region: region, Allocator: a.Name, RegionString: str})
		}
	}
	if env, set := s.Refs["FallbackEnvironment"], s.Refs["FallbackArmadaSet"]; env != "" && set != "" {
		src.Versions = []string{env + "::" + set}
	}
	return src, nil
}

// registeredIn lists every Allocator's registered game servers under the
// Region names they stand for: an Allocator's region string maps back to
// its Region; the first Allocator serves any other Region under its name.
func registeredIn(allocators []*stack.Allocator) []Registered {
	var out []Registered
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
