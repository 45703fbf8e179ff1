package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/player"
	"github.com/gamefabric-alloc/allocsvc/local/stack"
)

// devStack stands in for a running make dev: its API answers GET
// /v1/allocations/{id} from records, and one game server's port ends its
// record's game when a player says IWON, as the sample server does.
type devStack struct {
	mu      sync.Mutex
	records map[string]map[string]any
	api     *httptest.Server
}

func newDevStack(t *testing.T) *devStack {
	d := &devStack{records: map[string]map[string]any{}}
	d.api = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/v1/allocations/")
		d.mu.Lock()
		rec, ok := d.records[id]
		b, _ := json.Marshal(rec)
		d.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":{"code":"NOT_FOUND","message":"no such game instance"}}`)
			return
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(d.api.Close)
	return d
}

// gameServer hosts id on a game port and records the end on IWON.
func (d *devStack) gameServer(t *testing.T, id, state string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	port := ln.Addr().(*net.TCPAddr).Port
	d.mu.Lock()
	d.records[id] = map[string]any{"gameInstanceId": id, "state": state, "region": "us-west",
		"server": map[string]any{"address": ln.Addr().String(), "ip": "127.0.0.1", "ports": map[string]int{"game": port}}}
	d.mu.Unlock()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "WELCOME us-west-0 %s\n", id)
		if sc := bufio.NewScanner(c); sc.Scan() && sc.Text() == "IWON" {
			d.mu.Lock()
			d.records[id]["state"], d.records[id]["endReason"] = "Ended", "IWON"
			d.mu.Unlock()
			fmt.Fprintln(c, "GAME OVER")
		}
	}()
}

// roomsServer hosts the sessions ids on one game port, as a sample server
// with rooms does: players JOIN one, and IWON ends that one alone. orphan
// is recorded on the same server but not hosted there.
func (d *devStack) roomsServer(t *testing.T, orphan string, ids ...string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	port := ln.Addr().(*net.TCPAddr).Port
	hosted := map[string]bool{}
	d.mu.Lock()
	for _, id := range append(ids, orphan) {
		d.records[id] = map[string]any{"gameInstanceId": id, "state": "Linked", "region": "us-west", "placement": "room",
			"server": map[string]any{"address": ln.Addr().String(), "ip": "127.0.0.1", "ports": map[string]int{"game": port}}}
		hosted[id] = id != orphan
	}
	d.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			d.serveSessions(c, hosted)
		}
	}()
}

func (d *devStack) serveSessions(c net.Conn, hosted map[string]bool) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintln(c, "SESSIONS us-west-0")
	sc := bufio.NewScanner(c)
	if !sc.Scan() {
		return
	}
	id, ok := strings.CutPrefix(sc.Text(), "JOIN ")
	if !ok || !hosted[id] {
		fmt.Fprintln(c, "NO SUCH GAME")
		return
	}
	fmt.Fprintf(c, "WELCOME us-west-0 %s\n", id)
	if sc.Scan() && sc.Text() == "IWON" {
		d.mu.Lock()
		d.records[id]["state"], d.records[id]["endReason"] = "Ended", "IWON"
		d.mu.Unlock()
		fmt.Fprintln(c, "GAME OVER")
	}
}

func (d *devStack) stateOf(id string) any {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.records[id]["state"]
}

// state writes make dev's state file pointing at the stand-ins.
func (d *devStack) state(t *testing.T) string {
	path := stack.StateFile(t.TempDir())
	u := d.api.URL
	if err := stack.WriteState(path, stack.State{APIURL: u, DynamoDB: u, SecretsManager: u, GameFabric: []string{u}}); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPlay(t *testing.T) {
	d := newDevStack(t)
	d.gameServer(t, "gi-linked", "Linked")
	d.mu.Lock()
	d.records["gi-ended"] = map[string]any{"gameInstanceId": "gi-ended", "state": "Ended", "region": "us-west"}
	d.records["gi-allocating"] = map[string]any{"gameInstanceId": "gi-allocating", "state": "Allocating"}
	d.records["gi-noserver"] = map[string]any{"gameInstanceId": "gi-noserver", "state": "Linked"}
	d.mu.Unlock()
	live := d.state(t)

	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadURL := "http://" + dead.Addr().String()
	dead.Close()
	stopped := stack.StateFile(t.TempDir())
	if err := stack.WriteState(stopped, stack.State{APIURL: deadURL, DynamoDB: deadURL, SecretsManager: deadURL}); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, state, id string
		wantErr         string // "" = success
		wantOut         []string
	}{
		{"the player wins", live, "gi-linked", "", []string{"gi-linked is Linked in us-west on game server 127.0.0.1:",
			"sent IWON to 127.0.0.1:", `(it said "WELCOME us-west-0 gi-linked"); it answered GAME OVER`, "gi-linked is Ended (endReason IWON)"}},
		{"make dev never started", filepath.Join(t.TempDir(), "stack.json"), "gi-linked", "make dev is not running (no ", nil},
		{"make dev stopped", stopped, "gi-linked", "make dev is not running: the stack in " + stopped + " is not running", nil},
		{"unknown id", live, "gi-nope", `no game instance "gi-nope" in the running stack`, nil},
		{"already ended", live, "gi-ended", "gi-ended is already Ended", []string{"gi-ended is Ended in us-west\n"}},
		{"no server yet", live, "gi-allocating", "gi-allocating is Allocating: it has no game server yet", nil},
		{"no server in the record", live, "gi-noserver", "has no game server in its record", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var out strings.Builder
			err := run(ctx, &out, tt.state, tt.id)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("error %v; output:\n%s", err, out.String())
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

// On a server hosting several sessions, play ends the one named and no other.
func TestPlayEndsOneSessionOfMany(t *testing.T) {
	d := newDevStack(t)
	d.roomsServer(t, "gi-gone", "gi-a", "gi-b")
	state := d.state(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out strings.Builder
	if err := run(ctx, &out, state, "gi-a"); err != nil {
		t.Fatalf("error %v; output:\n%s", err, out.String())
	}
	for _, want := range []string{`(it said "WELCOME us-west-0 gi-a"); it answered GAME OVER`, "gi-a is Ended (endReason IWON)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if got := d.stateOf("gi-b"); got != "Linked" {
		t.Fatalf("gi-b is %v after gi-a's end", got)
	}
	err := run(ctx, &out, state, "gi-gone")
	if !errors.Is(err, player.ErrNoSuchGame) || !strings.Contains(err.Error(), `hosts no session "gi-gone"`) {
		t.Fatalf("gi-gone: %v", err)
	}
}
