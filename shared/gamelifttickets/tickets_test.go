package gamelifttickets

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/aws/smithy-go/encoding/cbor"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
)

// gameLift answers DescribeMatchmaking as GameLift does over Smithy RPC v2
// CBOR (what the pinned SDK speaks): the smithy-protocol header on every
// answer, a CBOR map body, errors as {__type, message}. It is this test's
// own small server, so that shared/ does not depend on local/ (whose
// stand-in, local/gamelift, has its own tests against the same SDK).
type gameLift struct {
	mu     sync.Mutex
	asked  [][]string
	answer cbor.Value
	status int
	delay  time.Duration
}

func (g *gameLift) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var ids []string
	if v, err := cbor.Decode(body); err == nil && r.URL.Path == "/service/GameLift/operation/DescribeMatchmaking" &&
		r.Header.Get("Smithy-Protocol") == "rpc-v2-cbor" {
		if m, ok := v.(cbor.Map); ok {
			list, _ := m["TicketIds"].(cbor.List)
			for _, id := range list {
				if s, ok := id.(cbor.String); ok {
					ids = append(ids, string(s))
				}
			}
		}
	}
	g.mu.Lock()
	g.asked = append(g.asked, ids)
	answer, status, delay := g.answer, g.status, g.delay
	g.mu.Unlock()
	select {
	case <-time.After(delay):
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Smithy-Protocol", "rpc-v2-cbor")
	w.Header().Set("Content-Type", "application/cbor")
	w.WriteHeader(max(status, http.StatusOK))
	_, _ = w.Write(cbor.Encode(answer))
}

// client is the real GameLift client of the pinned SDK, pointed at g.
func client(t *testing.T, g *gameLift) *gamelift.Client {
	t.Helper()
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return gamelift.New(gamelift.Options{Region: "eu-central-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")})
}

func player(id string, latency cbor.Map) cbor.Map {
	p := cbor.Map{"Team": cbor.String("red_team")}
	if id != "" {
		p["PlayerId"] = cbor.String(id)
	}
	if latency != nil {
		p["LatencyInMs"] = latency
	}
	return p
}

func ticket(id string, players ...cbor.Value) cbor.Map {
	return cbor.Map{"TicketId": cbor.String(id), "Status": cbor.String("COMPLETED"), "Players": cbor.List(players),
		"StartTime": &cbor.Tag{ID: 1, Value: cbor.Float64(1795435200.25)}}
}

func TestLatencies(t *testing.T) {
	g := &gameLift{answer: cbor.Map{"TicketList": cbor.List{
		ticket("t-1",
			player("p1", cbor.Map{"custom-eu-central-1": cbor.Uint(40), "us-west": cbor.Uint(150)}),
			player("p2", cbor.Map{"eu-central-1": cbor.Uint(0)})),
		// A ticket's players without latencies are left out.
		ticket("t.2", player("p3", nil), player("p4", cbor.Map{})),
		ticket("t-3", player("", cbor.Map{"ap-south-1": cbor.Uint(60000)})),
	}}}
	got, err := Tickets{API: client(t, g)}.Latencies(context.Background(), []string{"t-1", "t.2", "t-3", "gone"})
	if err != nil {
		t.Fatal(err)
	}
	want := []allocation.PlayerLatency{
		{PlayerID: "p1", LatencyMs: map[string]float64{"custom-eu-central-1": 40, "us-west": 150}},
		{PlayerID: "p2", LatencyMs: map[string]float64{"eu-central-1": 0}},
		{PlayerID: "", LatencyMs: map[string]float64{"ap-south-1": 60000}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("latencies:\n%+v\nwant:\n%+v", got, want)
	}
	if !reflect.DeepEqual(g.asked, [][]string{{"t-1", "t.2", "t-3", "gone"}}) {
		t.Fatalf("asked %v, want the ids in one call", g.asked)
	}
}

func TestLatenciesOfNoTicket(t *testing.T) {
	for _, answer := range []cbor.Value{cbor.Map{}, cbor.Map{"TicketList": cbor.List{}}} {
		got, err := Tickets{API: client(t, &gameLift{answer: answer})}.Latencies(context.Background(), []string{"gone"})
		if err != nil || len(got) != 0 {
			t.Fatalf("%v, %v; want no players", got, err)
		}
	}
}

func TestLatenciesErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		answer cbor.Map
		check  func(error) bool
	}{
		{"a modelled error", http.StatusBadRequest, cbor.Map{"__type": cbor.String("com.amazonaws.gamelift#InvalidRequestException"), "Message": cbor.String("bad ticket id")},
			func(err error) bool {
				var e *types.InvalidRequestException
				return errors.As(err, &e) && strings.Contains(err.Error(), "bad ticket id")
			}},
		{"an unsupported region", http.StatusBadRequest, cbor.Map{"__type": cbor.String("UnsupportedRegionException"), "Message": cbor.String("no FlexMatch here")},
			func(err error) bool { var e *types.UnsupportedRegionException; return errors.As(err, &e) }},
		{"access denied", http.StatusBadRequest, cbor.Map{"__type": cbor.String("AccessDeniedException"), "message": cbor.String("not authorized to perform gamelift:DescribeMatchmaking")},
			func(err error) bool { return strings.Contains(err.Error(), "gamelift:DescribeMatchmaking") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &gameLift{status: tc.status, answer: tc.answer}
			got, err := Tickets{API: client(t, g)}.Latencies(context.Background(), []string{"t-1"})
			if err == nil || got != nil || !strings.Contains(err.Error(), "gamelift DescribeMatchmaking") || !tc.check(err) {
				t.Fatalf("%v, %v; want the SDK's error, wrapped", got, err)
			}
		})
	}
}

// The caller's context bounds the call, the SDK's retries of throttling
// included.
func TestLatenciesWithinTheContext(t *testing.T) {
	for _, g := range []*gameLift{
		{delay: 10 * time.Second},
		{status: http.StatusBadRequest, answer: cbor.Map{"__type": cbor.String("ThrottlingException"), "message": cbor.String("rate exceeded")}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		start := time.Now()
		got, err := Tickets{API: client(t, g)}.Latencies(ctx, []string{"t-1"})
		cancel()
		if err == nil || got != nil || time.Since(start) > 3*time.Second {
			t.Fatalf("%v, %v after %v; want an error within the context", got, err, time.Since(start))
		}
	}
}
