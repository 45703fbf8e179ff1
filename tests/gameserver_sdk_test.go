//go:build integration

package tests

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/local/testkit"
	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
)

// sdkClient is a game server's SDK client for payload, pointed at the
// test's API (the payload names the address the service was configured
// with, which the test's API stands in for). Its logs go to logs.
func (e *env) sdkClient(t *testing.T, p gameserver.Payload, logs *testkit.SyncBuffer) *gameserver.Client {
	t.Helper()
	p.BackendAddress = e.api.URL
	gs, err := gameserver.New(gameserver.Options{Payload: p, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		LinkPatience: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if strings.Contains(logs.String(), p.PartnerGameToken) {
			t.Error("the SDK logged the PartnerGameToken")
		}
		if t.Failed() {
			t.Logf("SDK logs:\n%s", logs)
		}
	})
	return gs
}

// sidecar writes the payload GameFabric received for id to path, as the
// allocation sidecar does, in two writes: a server polling the file must
// not take the first half for the whole.
func sidecar(ctx context.Context, stub *gfemu.Installation, id, path string) error {
	for {
		for _, c := range stub.Calls() {
			if c.Payload["GameInstanceId"] != id {
				continue
			}
			raw, err := json.Marshal(c.Payload)
			if err != nil {
				return err
			}
			if err := os.WriteFile(path, raw[:len(raw)/2], 0o600); err != nil {
				return err
			}
			time.Sleep(50 * time.Millisecond)
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.Write(raw[len(raw)/2:])
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// A game server on the SDK through the real routes and DynamoDB Local:
// GameFabric calls it back during the allocate call, so its link comes
// while the instance is still Allocating and is retried until the
// allocation is recorded; then it heartbeats and ends the game.
func TestGameServerSDKLifecycle(t *testing.T) {
	e := newEnv(t, envOptions{})
	// The allocator answers a second after the callback (the payload).
	e.stub.Always("us-west", gfemu.Answer{Delay: time.Second})
	id := unique("gi-sdk")
	path := filepath.Join(t.TempDir(), "payload.json")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	sidecarDone := make(chan error, 1)
	go func() { sidecarDone <- sidecar(ctx, e.stub, id, path) }()
	type linkResult struct {
		gs   *gameserver.Client
		inst *gameserver.Instance
		err  error
	}
	logs := &testkit.SyncBuffer{}
	linked := make(chan linkResult, 1)
	go func() {
		p, err := gameserver.WaitForPayload(ctx, path, 10*time.Millisecond)
		if err != nil {
			linked <- linkResult{err: err}
			return
		}
		if p.GameInstanceID != id || p.BackendAddress != "http://127.0.0.1:10100" || p.ServerArgs != "-map=arena" {
			linked <- linkResult{err: errors.New("unexpected payload " + p.GoString())}
			return
		}
		p.BackendAddress = e.api.URL
		gs, err := gameserver.New(gameserver.Options{Payload: p, Logger: slog.New(slog.NewTextHandler(logs, nil))})
		if err != nil {
			linked <- linkResult{err: err}
			return
		}
		inst, err := gs.Link(ctx, gameserver.LinkRequest{Address: "127.0.0.1:7777", Ports: map[string]int{"game": 7777}, ServerName: "sdk-1"})
		linked <- linkResult{gs, inst, err}
	}()

	// No partnerGameToken: one is minted, and only the payload carries it.
	e.allocate(t, `{"gameInstanceId":"`+id+`","desiredRegion":"us-west","serverArgs":"-map=arena"}`).expect(t, http.StatusCreated, "")
	if err := <-sidecarDone; err != nil {
		t.Fatal(err)
	}
	var r linkResult
	select {
	case r = <-linked:
	case <-ctx.Done():
		t.Fatal("no link")
	}
	if r.err != nil || r.inst.State != gameserver.StateLinked {
		t.Fatalf("link: %+v, %v\nSDK logs:\n%s", r.inst, r.err, logs)
	}
	if !strings.Contains(logs.String(), "ALLOCATION_IN_PROGRESS") {
		t.Errorf("the link never met the allocation in progress; logs:\n%s", logs)
	}
	gs := r.gs
	item := e.rawItem(t, id)
	if str(item, "state") != "Linked" || str(item, "linkedAt") == "" {
		t.Fatalf("stored after link: state %q, linkedAt %q", str(item, "state"), str(item, "linkedAt"))
	}

	// Heartbeats until the game ends.
	var beats atomic.Int32
	hb := gs.StartHeartbeats(ctx, gameserver.HeartbeatOptions{Interval: 50 * time.Millisecond,
		OnHeartbeat: func(inst *gameserver.Instance) { beats.Add(1) }})
	testkit.WaitFor(t, 10*time.Second, "three heartbeats", func() bool { return beats.Load() >= 3 })
	if err := hb.Stop(); err != nil {
		t.Fatalf("heartbeats: %v", err)
	}
	if str(e.rawItem(t, id), "lastHeartbeatAt") == "" {
		t.Fatal("no heartbeat stored")
	}

	inst, err := gs.End(ctx, "IWON")
	if err != nil || inst.State != gameserver.StateEnded || inst.EndReason != "IWON" {
		t.Fatalf("end: %+v, %v", inst, err)
	}
	item = e.rawItem(t, id)
	if str(item, "state") != "Ended" || str(item, "endReason") != "IWON" {
		t.Fatalf("stored after end: %q %q", str(item, "state"), str(item, "endReason"))
	}
	// Ending again changes nothing and is no error; a heartbeat now says
	// the game is over.
	if inst, err := gs.End(ctx, "again"); err != nil || inst.EndReason != "IWON" {
		t.Fatalf("second end: %+v, %v", inst, err)
	}
	if err := gs.RunHeartbeats(ctx, gameserver.HeartbeatOptions{Interval: time.Millisecond}); !errors.Is(err, gameserver.ErrEnded) {
		t.Fatalf("heartbeats after the end: %v", err)
	}
	// Linking an Ended instance is refused for good, not retried.
	start := time.Now()
	if _, err := gs.Link(ctx, gameserver.LinkRequest{}); !gameserver.IsCode(err, gameserver.CodeInvalidState) || time.Since(start) > 5*time.Second {
		t.Fatalf("link after the end: %v (after %s)", err, time.Since(start))
	}
}

// The backend ends the game (DELETE): the heartbeat loop stops with
// ErrEnded. A wrong token fails at once with UNAUTHORIZED.
func TestGameServerSDKEndedByBackend(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.stub.Always("us-west", gfemu.Answer{})
	id := unique("gi-sdk-del")
	e.allocated(t, id)
	logs := &testkit.SyncBuffer{}
	payload := gameserver.Payload{GameInstanceID: id, PartnerGameToken: tokenFor(id), BackendAddress: "http://unused.invalid"}

	intruder := payload
	intruder.PartnerGameToken = tokenFor(id) + "-not"
	start := time.Now()
	_, err := e.sdkClient(t, intruder, logs).Link(context.Background(), gameserver.LinkRequest{})
	var api *gameserver.APIError
	if !errors.As(err, &api) || api.Status != http.StatusUnauthorized || api.Code != gameserver.CodeUnauthorized || time.Since(start) > 5*time.Second {
		t.Fatalf("link with a wrong token: %v (after %s)", err, time.Since(start))
	}
	if strings.Contains(err.Error(), intruder.PartnerGameToken) {
		t.Fatal("the error carries the token")
	}

	gs := e.sdkClient(t, payload, logs)
	if _, err := gs.Heartbeat(context.Background()); !gameserver.IsCode(err, gameserver.CodeInvalidState) {
		t.Fatalf("heartbeat before the link: %v", err)
	}
	if _, err := gs.Link(context.Background(), gameserver.LinkRequest{}); err != nil {
		t.Fatal(err)
	}
	var beats atomic.Int32
	hb := gs.StartHeartbeats(context.Background(), gameserver.HeartbeatOptions{Interval: 50 * time.Millisecond,
		OnHeartbeat: func(*gameserver.Instance) { beats.Add(1) }})
	defer hb.Stop()
	testkit.WaitFor(t, 10*time.Second, "a heartbeat", func() bool { return beats.Load() >= 1 })
	e.do(t, http.MethodDelete, "/v1/allocations/"+id, "").expect(t, http.StatusOK, "")
	select {
	case <-hb.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("heartbeats went on after the backend ended the game")
	}
	if err := hb.Err(); !errors.Is(err, gameserver.ErrEnded) || !strings.Contains(err.Error(), "EndedByBackend") {
		t.Fatalf("heartbeats stopped with %v, want ErrEnded (EndedByBackend)", err)
	}
}
