package gameliftapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Stand-ins for the ports: the use case itself is tested in
// shared/allocation and, end to end, in tests/.

// fakeAllocations places (or queues, or fails) as outcome says.
type fakeAllocations struct {
	mu      sync.Mutex
	records map[string]gameinstance.Record
	reqs    []allocation.Request
	// outcome is the state a new placement gets.
	outcome gameinstance.State
	failure *gameinstance.Failure
	// busy answers ALLOCATION_IN_PROGRESS this many times first.
	busy int
}

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func (f *fakeAllocations) Validate(req allocation.Request) error {
	_, err := allocation.Defaults{Request: allocation.DefaultOptions().Defaults.Request}.Resolve(req)
	return err
}

func (f *fakeAllocations) AllocateGameSession(_ context.Context, req allocation.Request, p allocation.GameSessionPlacement) (allocation.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.busy > 0 {
		f.busy--
		return allocation.Result{}, &gameinstance.Error{Code: gameinstance.CodeAllocationInProgress, RetryAfter: time.Millisecond}
	}
	f.reqs = append(f.reqs, req)
	if old, ok := f.records[req.GameInstanceID]; ok {
		if old.Fingerprint.GameLift != p.Digest {
			return allocation.Result{}, &gameinstance.Error{Code: gameinstance.CodeIdempotencyMismatch}
		}
		return allocation.Result{Record: old}, nil
	}
	rec := gameinstance.Record{GameInstanceID: req.GameInstanceID, State: f.outcome, Failure: f.failure, CreatedAt: t0, UpdatedAt: t0.Add(2 * time.Second),
		Fingerprint: gameinstance.Fingerprint{GameLift: p.Digest}}
	if f.outcome == gameinstance.StateAllocated {
		rec.Region, rec.AllocatedAt = req.PreferredRegions[0], rec.UpdatedAt
		rec.Server = &gameinstance.Server{Address: "203.0.113.7:7777", IP: "203.0.113.7", Ports: map[string]int{"game": 7777, "query": 27015}}
	}
	f.records[req.GameInstanceID] = rec
	if f.failure != nil {
		return allocation.Result{}, &gameinstance.Error{Code: f.failure.Code}
	}
	return allocation.Result{Record: rec, Created: true}, nil
}

func (f *fakeAllocations) Get(_ context.Context, id string) (gameinstance.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.records[id]; ok {
		return r, nil
	}
	return gameinstance.Record{}, &gameinstance.Error{Code: gameinstance.CodeNotFound}
}

func (f *fakeAllocations) CancelPlacement(_ context.Context, id string) (gameinstance.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.records[id]
	if r.State == gameinstance.StateQueued {
		r.State, r.Failure, r.UpdatedAt = gameinstance.StateFailed, &gameinstance.Failure{Code: gameinstance.CodePlacementCancelled}, t0.Add(5*time.Second)
		f.records[id] = r
	}
	return r, nil
}

type fakePlacements struct {
	mu   sync.Mutex
	kept map[string]gameinstance.GameSessionPlacement
}

func (f *fakePlacements) Keep(_ context.Context, p gameinstance.GameSessionPlacement) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if old, ok := f.kept[p.ID]; ok && old.Digest != p.Digest {
		return gameinstance.ErrOtherInputs
	}
	f.kept[p.ID] = p
	return nil
}

func (f *fakePlacements) Get(_ context.Context, id string) (gameinstance.GameSessionPlacement, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := f.kept[id]; ok {
		return p, nil
	}
	return gameinstance.GameSessionPlacement{}, gameinstance.ErrNotFound
}

type keys map[string]string

func (k keys) Secret(_ context.Context, id string) (string, bool, error) {
	s, ok := k[id]
	return s, ok, nil
}

const (
	keyID     = "AKIDGAMEFABRIC1"
	secret    = "gamefabric-test-secret"
	awsRegion = "eu-west-1"
)

type fixture struct {
	allocs     *fakeAllocations
	placements *fakePlacements
	handler    *Handler
	url        string
}

func newFixture(t *testing.T, outcome gameinstance.State) *fixture {
	t.Helper()
	f := &fixture{allocs: &fakeAllocations{records: map[string]gameinstance.Record{}, outcome: outcome},
		placements: &fakePlacements{kept: map[string]gameinstance.GameSessionPlacement{}}}
	svc := &Service{Allocations: f.allocs, Placements: f.placements, Cancel: f.allocs, Region: awsRegion, InProgressWait: time.Second,
		Sleep:  func(context.Context, time.Duration) error { return nil },
		Queues: map[string]Queue{"arena": {Regions: []string{"us-west", "eu-central-1"}, Timeout: 60 * time.Second, GameServerVersion: "prag::arena"}}}
	f.handler = &Handler{Service: svc, Verifier: Verifier{Keys: keys{keyID: secret}, Region: awsRegion, Now: time.Now}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res := f.handler.Serve(r.Context(), requestOf(r), "req-1", "123456789012")
		for k, v := range res.Header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(res.Status)
		_, _ = w.Write(res.Body)
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// requestOf is r as a function URL delivers it.
func requestOf(r *http.Request) Request {
	body, _ := io.ReadAll(r.Body)
	h := map[string]string{"host": r.Host}
	for k, v := range r.Header {
		h[strings.ToLower(k)] = strings.Join(v, ",")
	}
	return Request{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, Header: h, Body: body}
}

// client is the Go SDK's GameLift client (RPC v2 CBOR) on the fixture,
// signing with secretKey, without retries.
func (f *fixture) client(secretKey string) *gamelift.Client {
	return gamelift.New(gamelift.Options{Region: awsRegion, BaseEndpoint: aws.String(f.url),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secretKey}, nil
		}),
		Retryer: aws.NopRetryer{}})
}
