package main

import (
	"bufio"
	"log"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/testkit"
)

// The lobby's answers, on a game port of its own.
func TestLobby(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &testkit.SyncBuffer{}
	g := newGame(ln, "s-1", true, newTestLogger(logs))
	go g.serve()
	defer g.close()
	g.table("gi-live").letIn()
	g.table("gi-linking")
	g.table("gi-over").finish()
	tests := []struct{ send, want string }{
		{"JOIN gi-live", "WELCOME s-1 gi-live"},
		{"  JOIN gi-live  ", "WELCOME s-1 gi-live"},
		{"JOIN gi-linking", "NOT READY"},
		{"JOIN gi-over", "GAME OVER"},
		{"JOIN gi-nope", "NO SUCH GAME"},
		{"JOIN", "NO SUCH GAME"},
		{"join gi-live", "NO SUCH GAME"},
		{"IWON", "NO SUCH GAME"},
		{strings.Repeat("x", 5000), ""}, // longer than a line may be: hung up on
	}
	for _, tc := range tests {
		t.Run(tc.send[:min(len(tc.send), 20)], func(t *testing.T) {
			conn, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			p := &player{conn: conn, rd: bufio.NewReader(conn)}
			if greeting := p.line(); greeting != "SESSIONS s-1" {
				t.Fatalf("greeting %q", greeting)
			}
			if _, err := conn.Write([]byte(tc.send + "\n")); err != nil {
				t.Fatal(err)
			}
			if got := p.line(); got != tc.want {
				t.Fatalf("answer %q, want %q", got, tc.want)
			}
		})
	}
}

// Ended sessions are remembered up to maxEnded, the oldest forgotten.
func TestLobbyForgetsOldEndedSessions(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := newGame(ln, "s-1", true, newTestLogger(&testkit.SyncBuffer{}))
	defer g.close()
	live := g.table("gi-live")
	for i := range maxEnded + 10 {
		g.table("gi-" + strconv.Itoa(i)).finish()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.tables) != maxEnded+1 || len(g.ended) != maxEnded || g.tables["gi-0"] != nil || g.tables["gi-live"] != live ||
		!slices.Contains(g.ended, "gi-"+strconv.Itoa(maxEnded+9)) {
		t.Fatalf("%d tables, %d ended", len(g.tables), len(g.ended))
	}
}

func newTestLogger(w *testkit.SyncBuffer) *log.Logger { return log.New(w, "", log.Lmicroseconds) }
