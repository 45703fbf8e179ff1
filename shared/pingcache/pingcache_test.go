package pingcache

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

var (
	t0     = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	target = []gamefabric.PingTarget{{Address: "127.0.0.1", Port: 7600, Protocol: "udp"}}
)

func regionsOf(entries []Entry) []string {
	out := []string{}
	for _, e := range entries {
		out = append(out, e.Region+"/"+e.Zone)
	}
	return out
}

func TestSelect(t *testing.T) {
	upstream := map[string][]gamefabric.PingTarget{"us-west": target, "eu-central-1": target, "ap-south": target, "sa-east": {}}
	tests := []struct {
		name  string
		zones map[string]string
		want  []string
	}{
		{"mapped only, without targets omitted", map[string]string{"us-west": "US_WEST", "eu-central-1": "EU_CENTRAL", "sa-east": "SA"}, []string{"eu-central-1/EU_CENTRAL", "us-west/US_WEST"}},
		{"no map keeps all with targets", nil, []string{"ap-south/", "eu-central-1/", "us-west/"}},
		{"map matching nothing", map[string]string{"mars": "MARS"}, []string{}},
	}
	for _, tc := range tests {
		got := Select(upstream, tc.zones, t0, time.Minute)
		if !reflect.DeepEqual(regionsOf(got), tc.want) {
			t.Errorf("%s: Select = %v, want %v", tc.name, regionsOf(got), tc.want)
		}
		for _, e := range got {
			if !e.RefreshedAt.Equal(t0) || !e.ExpiresAt.Equal(t0.Add(3*time.Minute)) {
				t.Errorf("%s: times %v / %v", tc.name, e.RefreshedAt, e.ExpiresAt)
			}
		}
	}
}

func TestLive(t *testing.T) {
	entries := []Entry{{Region: "b", ExpiresAt: t0.Add(time.Second)}, {Region: "c", ExpiresAt: t0}, {Region: "a", ExpiresAt: t0.Add(time.Hour)}}
	if got := regionsOf(Live(entries, t0)); !reflect.DeepEqual(got, []string{"a/", "b/"}) {
		t.Fatalf("Live = %v", got)
	}
}

type memStore struct {
	entries  []Entry
	replaced int
}

func (m *memStore) List(context.Context) ([]Entry, error) { return m.entries, nil }
func (m *memStore) Replace(_ context.Context, e []Entry) (int, error) {
	m.replaced++
	m.entries = e
	return 0, nil
}

type fakeSource struct {
	answers []error
	calls   []string
	regions map[string][]gamefabric.PingTarget
	report  gamefabric.PingReport
}

func (f *fakeSource) Fetch(_ context.Context, token string) (gamefabric.Ping, error) {
	f.calls = append(f.calls, token)
	if len(f.answers) > 0 {
		err := f.answers[0]
		f.answers = f.answers[1:]
		if err != nil {
			return gamefabric.Ping{}, err
		}
	}
	return gamefabric.Ping{Regions: f.regions, Report: f.report}, nil
}

type tokens struct{ current string }

func (t *tokens) Token(context.Context) (string, error) { return t.current, nil }
func (t *tokens) Refresh(context.Context, string) (string, error) {
	t.current = "fresh"
	return t.current, nil
}

func TestRefresh(t *testing.T) {
	unauthorized := &gamefabric.Error{Kind: gamefabric.KindStatus, Status: 401}
	broken := &gamefabric.Error{Kind: gamefabric.KindDecode, Message: "bad"}
	tests := []struct {
		name        string
		answers     []error
		regions     map[string][]gamefabric.PingTarget
		wantErr     bool
		wantCalls   []string
		wantStored  []string
		wantReplace int
	}{
		{name: "stores mapped regions", regions: map[string][]gamefabric.PingTarget{"us-west": target, "x": target},
			wantCalls: []string{"cached"}, wantStored: []string{"us-west/US_WEST"}, wantReplace: 1},
		{name: "401 re-reads the token once", answers: []error{unauthorized}, regions: map[string][]gamefabric.PingTarget{"us-west": target},
			wantCalls: []string{"cached", "fresh"}, wantStored: []string{"us-west/US_WEST"}, wantReplace: 1},
		{name: "failure keeps the cache", answers: []error{broken}, wantErr: true,
			wantCalls: []string{"cached"}, wantStored: []string{"old/OLD"}},
		{name: "401 twice keeps the cache", answers: []error{unauthorized, unauthorized}, wantErr: true,
			wantCalls: []string{"cached", "fresh"}, wantStored: []string{"old/OLD"}},
		{name: "empty answer clears", regions: map[string][]gamefabric.PingTarget{},
			wantCalls: []string{"cached"}, wantStored: []string{}, wantReplace: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := &memStore{entries: []Entry{{Region: "old", Zone: "OLD"}}}
			src := &fakeSource{answers: tc.answers, regions: tc.regions}
			r := &Refresher{Source: src, Tokens: &tokens{current: "cached"}, Store: store,
				Zones: map[string]string{"us-west": "US_WEST"}, Period: time.Minute, Now: func() time.Time { return t0 }}
			_, err := r.Refresh(context.Background())
			if (err != nil) != tc.wantErr || !reflect.DeepEqual(src.calls, tc.wantCalls) ||
				!reflect.DeepEqual(regionsOf(store.entries), tc.wantStored) || store.replaced != tc.wantReplace {
				t.Fatalf("err %v, calls %v, stored %v (%d replaces)", err, src.calls, regionsOf(store.entries), store.replaced)
			}
			if tc.wantErr && !errors.Is(err, tc.answers[len(tc.answers)-1]) {
				t.Fatalf("err %v does not wrap the upstream error", err)
			}
		})
	}
}

type healthCalls struct{ live, known []string }

func (h *healthCalls) RecordPing(_ context.Context, live, known []string, _ time.Time) error {
	h.live, h.known = live, known
	return nil
}

// TestRefreshReportsWhatWasLeftOut: the decoder's counts reach the summary
// and the log (never the token), a region without targets is not cached
// but still known to region health, and a clean answer warns about nothing.
func TestRefreshReportsWhatWasLeftOut(t *testing.T) {
	dropped := gamefabric.PingReport{TargetsDropped: 2, RegionsOmitted: 1, FirstProblem: `region "sa-east" target 0: port must be 1-65535`}
	tests := []struct {
		name      string
		zones     map[string]string
		report    gamefabric.PingReport
		wantKnown []string
		wantWarn  bool
	}{
		{"dropped targets, no zone map", nil, dropped, []string{"sa-east", "us-west"}, true},
		{"dropped targets, zone map", map[string]string{"us-west": "US_WEST", "eu": "EU"}, dropped, []string{"eu", "us-west"}, true},
		{"region without servers only", nil, gamefabric.PingReport{RegionsOmitted: 1}, []string{"sa-east", "us-west"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			ctx := logging.WithLogger(context.Background(), logging.New(&logs, slog.LevelInfo))
			store, health := &memStore{}, &healthCalls{}
			src := &fakeSource{regions: map[string][]gamefabric.PingTarget{"us-west": target, "sa-east": {}}, report: tc.report}
			r := &Refresher{Source: src, Tokens: &tokens{current: "secret-token"}, Store: store, Zones: tc.zones,
				Period: time.Minute, Now: func() time.Time { return t0 }, Health: health}
			s, err := r.Refresh(ctx)
			if err != nil || s.Upstream != 2 || !reflect.DeepEqual(s.Stored, []string{"us-west"}) || s.PingReport != tc.report {
				t.Fatalf("summary = %+v, %v", s, err)
			}
			sort.Strings(health.known)
			if !reflect.DeepEqual(health.live, []string{"us-west"}) || !reflect.DeepEqual(health.known, tc.wantKnown) {
				t.Fatalf("health live %v known %v, want [us-west] and %v", health.live, health.known, tc.wantKnown)
			}
			out := logs.String()
			if strings.Contains(out, "secret-token") || !strings.Contains(out, fmt.Sprintf(`"targetsDropped":%d`, tc.report.TargetsDropped)) ||
				!strings.Contains(out, fmt.Sprintf(`"regionsOmitted":%d`, tc.report.RegionsOmitted)) || strings.Contains(out, `"level":"WARN"`) != tc.wantWarn {
				t.Fatalf("logs (want a warning: %v):\n%s", tc.wantWarn, out)
			}
			body, _ := json.Marshal(s)
			if !strings.Contains(string(body), `"upstreamRegions":2,`) || !strings.Contains(string(body), fmt.Sprintf(`"targetsDropped":%d,`, tc.report.TargetsDropped)) {
				t.Fatalf("the Lambda result %s does not flatten the report", body)
			}
		})
	}
}

// An Agones allocator's region is listed whether or not the Ping Service
// has targets for it (its own, when it has them), in a zone map or not,
// and region health never hears of it lacking targets.
func TestRefreshListsUnpingedRegions(t *testing.T) {
	tests := []struct {
		name      string
		regions   map[string][]gamefabric.PingTarget
		wantStore []string
		wantLive  []string
	}{
		{"no targets anywhere", map[string][]gamefabric.PingTarget{}, []string{"eu-metal/EU_METAL", "us-metal/"}, nil},
		{"the Ping Service's targets for one", map[string][]gamefabric.PingTarget{"us-west": target, "eu-metal": target},
			[]string{"eu-metal/EU_METAL", "us-metal/", "us-west/US_WEST"}, []string{"eu-metal", "us-west"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store, health := &memStore{}, &healthCalls{}
			r := &Refresher{Source: &fakeSource{regions: tc.regions}, Tokens: &tokens{current: "t"}, Store: store, Health: health,
				Zones:    map[string]string{"us-west": "US_WEST", "eu-metal": "EU_METAL"},
				Unpinged: []string{"eu-metal", "us-metal"}, Period: time.Minute, Now: func() time.Time { return t0 }}
			if _, err := r.Refresh(context.Background()); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(regionsOf(store.entries), tc.wantStore) || !reflect.DeepEqual(health.live, tc.wantLive) ||
				!reflect.DeepEqual(health.known, []string{"us-west"}) {
				t.Fatalf("stored %v, live %v, known %v", regionsOf(store.entries), health.live, health.known)
			}
			for _, e := range store.entries {
				if e.Targets == nil || !e.ExpiresAt.After(t0) {
					t.Fatalf("entry %+v: targets must be a list, and it must live", e)
				}
			}
		})
	}
}
