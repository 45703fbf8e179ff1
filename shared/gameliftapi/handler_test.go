package gameliftapi

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

func startInput(id string) *gamelift.StartGameSessionPlacementInput {
	return &gamelift.StartGameSessionPlacementInput{PlacementId: aws.String(id), GameSessionQueueName: aws.String("arena"),
		MaximumPlayerSessionCount: aws.Int32(4), GameSessionName: aws.String("duel"), GameSessionData: aws.String("map=dust"),
		GameProperties:        []types.GameProperty{{Key: aws.String("mode"), Value: aws.String("ctf")}},
		DesiredPlayerSessions: []types.DesiredPlayerSession{{PlayerId: aws.String("p1"), PlayerData: aws.String("red")}},
		PlayerLatencies: []types.PlayerLatency{
			{PlayerId: aws.String("p1"), RegionIdentifier: aws.String("eu-central-1"), LatencyInMilliseconds: aws.Float32(20.5)},
			{PlayerId: aws.String("p1"), RegionIdentifier: aws.String("us-west"), LatencyInMilliseconds: aws.Float32(90)},
			{PlayerId: aws.String("p1"), RegionIdentifier: aws.String("ap-south-1"), LatencyInMilliseconds: aws.Float32(9)}}}
}

// The Go SDK (RPC v2 CBOR) starts, describes and stops placements: every
// member as the SDK reads it (an integer Port, epoch timestamps, float32
// latencies), the players' latencies ordering the queue's regions.
func TestTheGoSDKPlacesDescribesAndStops(t *testing.T) {
	f := newFixture(t, gameinstance.StateAllocated)
	c, ctx := f.client(secret), context.Background()
	out, err := c.StartGameSessionPlacement(ctx, startInput("pl-1"))
	if err != nil {
		t.Fatal(err)
	}
	// A new placement is PENDING, as GameLift answers it, even when it
	// is already placed: its clients describe it until it is not.
	if p := out.GameSessionPlacement; p.Status != types.GameSessionPlacementStatePending || p.IpAddress != nil || p.Port != nil || p.EndTime != nil ||
		aws.ToString(p.GameSessionQueueName) != "arena" || !p.StartTime.Equal(t0) || len(p.PlayerLatencies) != 3 {
		t.Fatalf("StartGameSessionPlacement answered %+v", p)
	}
	req := f.allocs.reqs[0]
	if strings.Join(req.PreferredRegions, ",") != "eu-central-1,us-west" || len(req.PlayerLatencies) != 1 || len(req.PlayerLatencies[0].LatencyMs) != 2 ||
		req.GameInstanceID != "pl-1" || *req.QueueTimeoutSeconds != 60 {
		t.Fatalf("allocated %+v", req)
	}
	d, err := c.DescribeGameSessionPlacement(ctx, &gamelift.DescribeGameSessionPlacementInput{PlacementId: aws.String("pl-1")})
	if err != nil {
		t.Fatal(err)
	}
	p := d.GameSessionPlacement
	if p.Status != types.GameSessionPlacementStateFulfilled || aws.ToString(p.IpAddress) != "203.0.113.7" || aws.ToInt32(p.Port) != 7777 ||
		aws.ToString(p.GameSessionRegion) != "eu-central-1" || aws.ToString(p.GameSessionQueueName) != "arena" ||
		aws.ToString(p.GameSessionArn) != "arn:aws:gamelift:eu-west-1::gamesession/fleet-gamefabric/pl-1" ||
		!p.StartTime.Equal(t0) || !p.EndTime.Equal(t0.Add(2e9)) || aws.ToInt32(p.MaximumPlayerSessionCount) != 4 ||
		len(p.PlacedPlayerSessions) != 1 || !strings.HasPrefix(aws.ToString(p.PlacedPlayerSessions[0].PlayerSessionId), "psess-") ||
		len(p.PlayerLatencies) != 3 || aws.ToFloat32(p.PlayerLatencies[0].LatencyInMilliseconds) != 20.5 || aws.ToString(p.GameSessionData) != "map=dust" {
		t.Fatalf("DescribeGameSessionPlacement answered %+v", p)
	}
	_, err = c.StopGameSessionPlacement(ctx, &gamelift.StopGameSessionPlacementInput{PlacementId: aws.String("pl-1")})
	var ire *types.InvalidRequestException
	if !errors.As(err, &ire) || !strings.Contains(ire.ErrorMessage(), "FULFILLED") {
		t.Fatalf("Stop of a fulfilled placement = %v, want a typed InvalidRequestException", err)
	}
	// The same start again (an SDK's retry) is the same placement; other
	// inputs under its id are refused.
	if again, err := c.StartGameSessionPlacement(ctx, startInput("pl-1")); err != nil || again.GameSessionPlacement.Status != types.GameSessionPlacementStateFulfilled {
		t.Fatalf("the same start again: %v", err)
	}
	other := startInput("pl-1")
	other.GameSessionName = aws.String("another")
	if _, err := c.StartGameSessionPlacement(ctx, other); !errors.As(err, &ire) {
		t.Fatalf("other inputs for pl-1: %v, want InvalidRequestException", err)
	}
}

// Pending, cancelled, and the typed errors: an unknown id, an unknown
// queue, a wrong secret key, a busy placement waited out.
func TestTheGoSDKSeesGameLiftsErrors(t *testing.T) {
	f := newFixture(t, gameinstance.StateQueued)
	c, ctx := f.client(secret), context.Background()
	f.allocs.busy = 2
	out, err := c.StartGameSessionPlacement(ctx, startInput("pl-2"))
	if err != nil || out.GameSessionPlacement.Status != types.GameSessionPlacementStatePending || out.GameSessionPlacement.IpAddress != nil ||
		out.GameSessionPlacement.EndTime != nil {
		t.Fatalf("a queued placement: %+v, %v", out, err)
	}
	stop, err := c.StopGameSessionPlacement(ctx, &gamelift.StopGameSessionPlacementInput{PlacementId: aws.String("pl-2")})
	if err != nil || stop.GameSessionPlacement.Status != types.GameSessionPlacementStateCancelled {
		t.Fatalf("Stop while pending = %+v, %v", stop, err)
	}
	var nf *types.NotFoundException
	if _, err := c.DescribeGameSessionPlacement(ctx, &gamelift.DescribeGameSessionPlacementInput{PlacementId: aws.String("pl-none")}); !errors.As(err, &nf) {
		t.Fatalf("an unknown id: %v, want NotFoundException", err)
	}
	unknownQueue := startInput("pl-3")
	unknownQueue.GameSessionQueueName = aws.String("arn:aws:gamelift:eu-west-1:123456789012:gamesessionqueue/nope")
	if _, err := c.StartGameSessionPlacement(ctx, unknownQueue); !errors.As(err, &nf) {
		t.Fatalf("an unknown queue: %v, want NotFoundException", err)
	}
	var ue *types.UnauthorizedException
	if _, err := f.client("wrong").DescribeGameSessionPlacement(ctx, &gamelift.DescribeGameSessionPlacementInput{PlacementId: aws.String("pl-2")}); !errors.As(err, &ue) {
		t.Fatalf("a wrong secret key: %v, want UnauthorizedException", err)
	}
	if _, ok := f.placements.kept["pl-3"]; ok {
		t.Fatal("an unknown queue's placement was kept")
	}
}

// Bad input is InvalidRequestException, and nothing is kept or allocated.
func TestBadInputLeavesNothing(t *testing.T) {
	f := newFixture(t, gameinstance.StateAllocated)
	c, ctx := f.client(secret), context.Background()
	tooMany := startInput("pl-4")
	for range 16 {
		tooMany.GameProperties = append(tooMany.GameProperties, types.GameProperty{Key: aws.String("k"), Value: aws.String("v")})
	}
	far := startInput("pl-5")
	far.PlayerLatencies[0].LatencyInMilliseconds = aws.Float32(60001)
	both := startInput("pl-6")
	both.PriorityConfigurationOverride = &types.PriorityConfigurationOverride{LocationOrder: []string{"us-west"}}
	big := startInput("pl-7")
	big.GameSessionData = aws.String(strings.Repeat("x", 50<<10))
	for name, in := range map[string]*gamelift.StartGameSessionPlacementInput{"17 properties": tooMany, "latency out of range": far,
		"LocationOrder with latencies": both, "a game session too big for the payload": big} {
		var ire *types.InvalidRequestException
		if _, err := c.StartGameSessionPlacement(ctx, in); !errors.As(err, &ire) {
			t.Errorf("%s: %v, want InvalidRequestException", name, err)
		}
	}
	if len(f.placements.kept) != 0 || len(f.allocs.reqs) != 0 {
		t.Fatalf("bad input left %d kept placements and %d allocations", len(f.placements.kept), len(f.allocs.reqs))
	}
}
