//go:build integration

package tests

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// Records the code before issue 35 left in the table: Linked instances
// whose heartbeats moved their index key (to the deadline rounded down to
// a minute), one of them overdue, and one written before there was an
// index. After the upgrade the sweep marks the overdue one at once, leaves
// the live ones and their keys alone, heartbeats stop moving the keys (the
// index-less record gets one, once), and once the servers stop, each is
// marked at the first run past its deadline.
func TestHealthSweepOnRecordsTheOldCodeLeft(t *testing.T) {
	t0 := time.Now().UTC().Truncate(time.Minute)
	clk := harness.NewClock(t0)
	e := newEnv(t, envOptions{now: clk.Now})
	p := e.lifecycle.Policy
	window := p.Period * time.Duration(p.FailureThreshold)
	put := func(id string, beat time.Time, indexed bool) {
		linked := t0.Add(-20 * time.Minute)
		rec := gameinstance.Record{GameInstanceID: id, State: gameinstance.StateLinked, Version: 9, Region: "us-west",
			Fingerprint: gameinstance.Fingerprint{DesiredRegion: "us-west"}, ClaimID: "old-" + id, LeaseExpiresAt: linked,
			PartnerGameTokenHash: gameinstance.HashToken(tokenFor(id)), CreatedAt: linked, UpdatedAt: beat, LinkedAt: linked, LastHeartbeatAt: beat}
		if indexed {
			rec.HealthDeadline = beat.Add(window).Truncate(window - p.Period) // the old heartbeat's key
		}
		av, err := store.Encode(rec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stack.ddb.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(e.table), Item: av}); err != nil {
			t.Fatal(err)
		}
	}
	live := []string{"old-live", "old-early", "pre-index"}
	put("old-live", t0.Add(-10*time.Second), true)  // key t0+1m: not listed yet
	put("old-early", t0.Add(-50*time.Second), true) // key t0: listed, alive
	put("pre-index", t0.Add(-10*time.Second), false)
	put("old-dead", t0.Add(-5*time.Minute), true) // overdue since t0-3m30s
	keys := map[string]string{}
	for _, id := range live {
		keys[id] = num(e.rawItem(t, id), "healthDeadline")
	}

	sweep := func(at time.Time) int {
		t.Helper()
		clk.Set(at)
		sum, err := e.lifecycle.Sweep(context.Background())
		if err != nil || sum.Moved != 0 || sum.Failures != 0 {
			t.Fatalf("sweep at %v: %+v, %v", at.Sub(t0), sum, err)
		}
		return sum.Marked
	}
	if n := sweep(t0); n != 1 || e.state(t, "old-dead") != "Unhealthy" {
		t.Fatalf("first sweep marked %d, old-dead is %s; want only old-dead", n, e.state(t, "old-dead"))
	}
	var last time.Time
	for at := t0.Add(20 * time.Second); at.Before(t0.Add(4 * time.Minute)); at = at.Add(p.Period) {
		clk.Set(at)
		for _, id := range live {
			e.server(t, "heartbeat", id, "").expect(t, 200, "")
			k := num(e.rawItem(t, id), "healthDeadline")
			if keys[id] == "" {
				keys[id] = k // the index-less record's first heartbeat gives it its key
			}
			if k == "" || k != keys[id] {
				t.Fatalf("%s: heartbeat at %v moved the index key from %q to %q", id, at.Sub(t0), keys[id], k)
			}
		}
		last = at
		if next := at.Add(p.Period); next.Truncate(time.Minute).After(at) {
			if n := sweep(next.Truncate(time.Minute)); n != 0 {
				t.Fatalf("a sweep at %v marked %d heartbeating instances", next.Truncate(time.Minute).Sub(t0), n)
			}
		}
	}
	deadline := last.Add(window)
	for at := last.Truncate(time.Minute).Add(time.Minute); at.Before(deadline.Add(2 * time.Minute)); at = at.Add(time.Minute) {
		n := sweep(at)
		if first := !at.Before(deadline) && at.Add(-time.Minute).Before(deadline); (n == len(live)) != first || (n != 0 && n != len(live)) {
			t.Fatalf("last heartbeats at %v, deadline %v: the sweep at %v marked %d", last.Sub(t0), deadline.Sub(t0), at.Sub(t0), n)
		}
	}
	for _, id := range live {
		if item := e.rawItem(t, id); str(item, "state") != "Unhealthy" || str(item, "unhealthyReason") != gameinstance.ReasonMissedHeartbeats {
			t.Errorf("%s: %s/%s", id, str(item, "state"), str(item, "unhealthyReason"))
		}
	}
}
