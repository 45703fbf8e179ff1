package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// The game server's side of an allocation is billed too: one link, a
// heartbeat every HeartbeatEvery (README: a third of HEALTH_PERIOD), one end.
const (
	HeartbeatEvery      = 10 * time.Second
	heartbeatsPerServer = 5
	typicalGame         = 20 * time.Minute
)

// LifecycleCall is what one kind of link-back call costs, measured.
type LifecycleCall struct {
	Name          string
	N             int
	Took          Summary // handler time in process, DynamoDB Local round trips included
	Requests      float64 // DynamoDB requests per call
	ReadUnits     float64 // per call
	WriteUnits    float64 // per call, index writes included
	IndexWrites   float64 // the HealthDeadlineIndex share of WriteUnits
	USDPerMillion float64 // HTTP API + Lambda request + billed duration + DynamoDB
}

// LifecycleResult prices a game server's calls.
type LifecycleResult struct {
	Link, Heartbeat, End LifecycleCall
	HeartbeatEvery, Game time.Duration
	// PerGameHour is the heartbeats of one game-hour; PerGame a typical game
	// (link, heartbeats, end). Both in USD per 1M.
	PerGameHour, PerGame float64
	// PerGameAt30s is PerGame with a heartbeat every HEALTH_PERIOD (30 s).
	PerGameAt30s float64
	// Allocation is what allocating the game's server costs per 1M (the
	// first cost scenario), and TimesAllocation PerGame over it.
	Allocation, TimesAllocation float64
	// IDPrefix starts the ids of the games played (MeasureEvents reads
	// their stream records).
	IDPrefix string
}

// MeasureLifecycle links, heartbeats and ends n Allocated instances through
// the link-back handler in process (linkBackRig).
func MeasureLifecycle(ctx context.Context, s *Stack, n int, log io.Writer) (LifecycleResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	rig := newLinkBackRig(s, false)
	defer rig.Close()

	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	games := make([]game, n)
	for i := range games {
		id := fmt.Sprintf("lc-%s-%d", run, i)
		games[i] = game{id: id, token: "bench-partner-token-" + id}
		if err := allocated(ctx, rig.records, games[i]); err != nil {
			return LifecycleResult{}, err
		}
	}
	// A server links a few seconds after its allocation.
	linkedAt := rig.clock.Now().Add(5 * time.Second)
	rig.clock.Set(linkedAt)
	res := LifecycleResult{HeartbeatEvery: HeartbeatEvery, Game: typicalGame, IDPrefix: "lc-" + run + "-"}
	var err error
	if res.Link, err = rig.measure(ctx, "link", games, 1, fixed(`{"address":"127.0.0.1:7777","ports":{"game":7777}}`), linkedAt); err != nil {
		return res, err
	}
	if res.Heartbeat, err = rig.measure(ctx, "heartbeat", games, heartbeatsPerServer, fixed(""), linkedAt); err != nil {
		return res, err
	}
	if res.End, err = rig.measure(ctx, "end", games, 1, fixed(`{"reason":"bench"}`), linkedAt); err != nil {
		return res, err
	}
	// Five heartbeats per server cannot show how often a long game moves
	// its index key, so every figure prices the moves by the step.
	step := lifecycle.DefaultPolicy.IndexStep()
	res.PerGameHour = heartbeatsFor(res.Heartbeat, HeartbeatEvery, step, time.Hour)
	res.PerGame = perGame(res, HeartbeatEvery, step)
	res.PerGameAt30s = perGame(res, lifecycle.DefaultPolicy.Period, step)
	progress(log, "lifecycle: heartbeat = %.2f requests, %.2f RRU, %.2f WRU (%.2f on the index) = $%.2f per 1M; a %s game $%.0f per 1M games",
		res.Heartbeat.Requests, res.Heartbeat.ReadUnits, res.Heartbeat.WriteUnits, res.Heartbeat.IndexWrites, res.Heartbeat.USDPerMillion, typicalGame, res.PerGame)
	return res, nil
}

// allocated writes an Allocated record the way an allocation leaves it,
// with a known link-back token: the claim, then the outcome.
func allocated(ctx context.Context, records *store.GameInstances, g game) error {
	id, now := g.id, time.Now()
	rec := gameinstance.Record{GameInstanceID: id, State: gameinstance.StateAllocating, ClaimID: "bench-" + id,
		PartnerGameTokenHash: gameinstance.HashToken(g.token), Fingerprint: gameinstance.Fingerprint{DesiredRegion: RegionOK},
		LeaseExpiresAt: now.Add(time.Minute), CreatedAt: now, UpdatedAt: now, HealthDeadline: now.Add(lifecycle.DefaultPolicy.LinkTimeout)}
	if err := records.Claim(ctx, rec, now); err != nil {
		return fmt.Errorf("set up %s: %w", id, err)
	}
	rec.State, rec.Region = gameinstance.StateAllocated, RegionOK
	rec.Server = &gameinstance.Server{Address: "127.0.0.1:7777", IP: "127.0.0.1", Ports: map[string]int{"game": 7777}}
	if _, err := records.Finish(ctx, rec); err != nil {
		return fmt.Errorf("set up %s: %w", id, err)
	}
	return nil
}

func linkBackCall(ctx context.Context, base, id, call, token, body string) (time.Duration, error) {
	status, _, took, err := postJSON(ctx, http.DefaultClient, base+"/v1/game-instances/"+id+"/"+call, token, []byte(body))
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("status %d", status)
	}
	if err != nil {
		return took, fmt.Errorf("%s %s: %w", call, id, err)
	}
	return took, nil
}

// perGame prices a typical game heartbeating every every: its link, its
// heartbeats (heartbeatsFor) and its end.
func perGame(l LifecycleResult, every, step time.Duration) float64 {
	return l.Link.USDPerMillion + l.End.USDPerMillion + heartbeatsFor(l.Heartbeat, every, step, typicalGame)
}

// heartbeatsFor prices d of heartbeats every every: the measured heartbeat
// without its index writes, plus the index key's moves, one per step at
// most (a heartbeat moves it only when its rounded deadline changes), at
// most one per heartbeat.
func heartbeatsFor(hb LifecycleCall, every, step, d time.Duration) float64 {
	beats := float64(d / every)
	moves := float64(d / max(every, step))
	base := hb.USDPerMillion - hb.IndexWrites*prices.DynamoWRU
	return beats*base + moves*2*prices.DynamoWRU
}
