package player

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
)

// gamePort serves connections the way script says: NOT READY to the
// first notReady of them, then greet, then (when the player sends IWON)
// answer after.
type gamePort struct {
	greeting string        // first line; "" sends nothing
	after    string        // the answer to IWON; "" hangs up
	stall    time.Duration // wait before answering IWON
	heard    chan string   // what the player sent
	notReady int           // connections answered NOT READY first
}

func (g gamePort) start(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		for n := 0; err == nil && (n < g.notReady || g.greeting == "NOT READY"); n++ {
			fmt.Fprintln(c, "NOT READY") // as the sample server's game port does
			c.Close()
			c, err = ln.Accept()
		}
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if g.greeting == "" {
			time.Sleep(g.stall)
			return
		}
		fmt.Fprintln(c, g.greeting)
		sc := bufio.NewScanner(c)
		if !sc.Scan() {
			return
		}
		g.heard <- sc.Text()
		time.Sleep(g.stall)
		if g.after != "" {
			fmt.Fprintln(c, g.after)
		}
	}()
	return ln.Addr().String()
}

func TestSendIWON(t *testing.T) {
	tests := []struct {
		name      string
		port      gamePort
		instance  string
		timeout   time.Duration
		wantErr   error  // errors.Is
		wantText  string // in the error
		wantSent  bool
		wantOver  bool
		wantGreet string
	}{
		{name: "linked: win, then GAME OVER", port: gamePort{greeting: "WELCOME us-west-0 gi-1", after: "GAME OVER"},
			wantSent: true, wantOver: true, wantGreet: "WELCOME us-west-0 gi-1"},
		{name: "the expected instance", port: gamePort{greeting: "WELCOME s gi-1", after: "GAME OVER"}, instance: "gi-1",
			wantSent: true, wantOver: true},
		{name: "another instance: nothing sent", port: gamePort{greeting: "WELCOME s gi-2", after: "GAME OVER"}, instance: "gi-1",
			wantErr: ErrOtherGame, wantText: `hosts "gi-2", not "gi-1"`},
		{name: "not linked yet", port: gamePort{greeting: "NOT READY"}, wantErr: ErrNotReady},
		{name: "let in a moment after linking", port: gamePort{notReady: 3, greeting: "WELCOME us-west-0 gi-1", after: "GAME OVER"},
			instance: "gi-1", wantSent: true, wantOver: true, wantGreet: "WELCOME us-west-0 gi-1"},
		{name: "already over", port: gamePort{greeting: "GAME OVER"}, wantErr: ErrGameOver},
		{name: "not a game port", port: gamePort{greeting: "HTTP/1.1 400 Bad Request"}, wantText: "unexpected greeting"},
		{name: "hangs up after the win", port: gamePort{greeting: "WELCOME s gi-1"}, wantSent: true},
		{name: "silent: bounded", port: gamePort{stall: 2 * time.Second}, timeout: 200 * time.Millisecond,
			wantErr: context.DeadlineExceeded, wantText: "no greeting"},
		{name: "no GAME OVER in time: bounded", port: gamePort{greeting: "WELCOME s gi-1", after: "GAME OVER", stall: 2 * time.Second},
			timeout: 300 * time.Millisecond, wantErr: context.DeadlineExceeded, wantText: "sent IWON, then no GAME OVER", wantSent: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.port.heard = make(chan string, 1)
			addr := tt.port.start(t)
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			start := time.Now()
			out, err := SendIWONFor(ctx, addr, tt.instance)
			if tt.timeout > 0 && time.Since(start) > tt.timeout+time.Second {
				t.Errorf("took %s, bounded by %s", time.Since(start), tt.timeout)
			}
			switch {
			case tt.wantErr == nil && tt.wantText == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			case tt.wantText != "" && (err == nil || !strings.Contains(err.Error(), tt.wantText)):
				t.Fatalf("error %v, want it to say %q", err, tt.wantText)
			}
			if err != nil && !strings.Contains(err.Error(), addr) {
				t.Errorf("error %q does not name the address", err)
			}
			var sent string
			select {
			case sent = <-tt.port.heard:
			case <-time.After(100 * time.Millisecond):
			}
			if (sent == "IWON") != tt.wantSent {
				t.Errorf("the server heard %q; want IWON sent: %v", sent, tt.wantSent)
			}
			if out.GameOver != tt.wantOver {
				t.Errorf("GameOver = %v, want %v", out.GameOver, tt.wantOver)
			}
			if tt.wantGreet != "" && (out.Welcome != tt.wantGreet || out.Server != "us-west-0" || out.GameInstanceID != "gi-1") {
				t.Errorf("outcome = %+v", out)
			}
		})
	}
}

func TestSendIWONNothingListening(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	_, err := SendIWONFor(context.Background(), addr, "")
	if err == nil || !strings.Contains(err.Error(), "connect to the game port "+addr) {
		t.Fatalf("error = %v", err)
	}
}

func TestSendIWONCancelled(t *testing.T) {
	addr := gamePort{stall: 5 * time.Second, heard: make(chan string, 1)}.start(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := SendIWONFor(ctx, addr, "")
	if !errors.Is(err, context.Canceled) || time.Since(start) > 2*time.Second {
		t.Fatalf("error %v after %s; want context.Canceled at once", err, time.Since(start))
	}
}

func TestGameAddress(t *testing.T) {
	tests := []struct {
		ip, address string
		ports       map[string]int
		want        string // "" = an error
	}{
		{"10.0.0.1", "10.0.0.1:7000", map[string]int{"game": 7777}, "10.0.0.1:7777"},
		{"", "127.0.0.1:7000", map[string]int{"game": 7001, "alloc": 7002}, "127.0.0.1:7001"},
		{"::1", "[::1]:7000", map[string]int{"game": 7001}, "[::1]:7001"},
		{"10.0.0.1", "10.0.0.1:7000", nil, "10.0.0.1:7000"},
		{"10.0.0.1", "10.0.0.1:7000", map[string]int{"game": 70000}, "10.0.0.1:7000"},
		{"", "no-port", nil, ""},
		{"", "", map[string]int{"game": 7000}, ""},
	}
	for _, tt := range tests {
		got, err := GameAddress(&apishape.Server{IP: tt.ip, Address: tt.address, Ports: tt.ports})
		if got != tt.want || (err != nil) != (tt.want == "") {
			t.Errorf("GameAddress(%q, %q, %v) = %q, %v; want %q", tt.ip, tt.address, tt.ports, got, err, tt.want)
		}
	}
}

func TestTarget(t *testing.T) {
	srv := &apishape.Server{Address: "127.0.0.1:7000", IP: "127.0.0.1", Ports: map[string]int{"game": 7001}}
	for state, want := range map[apishape.State]string{
		"Linked": "", "Allocated": "", "Allocating": "no game server yet", "Ended": "already Ended",
		"Unhealthy": "already Unhealthy", "Failed": "no game server was allocated", "": "state \"\"",
	} {
		addr, err := Target(&apishape.Allocation{GameInstanceID: "gi-1", State: state, Server: srv})
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) || (err == nil && addr != "127.0.0.1:7001") {
			t.Errorf("Target of a %q allocation = %q, %v, want %q", state, addr, err, want)
		}
	}
	for _, a := range []apishape.Allocation{{GameInstanceID: "gi-1", State: "Linked"}, {GameInstanceID: "gi-1", State: "Linked", Server: &apishape.Server{Address: "nowhere"}}} {
		if _, err := Target(&a); err == nil || !strings.HasPrefix(err.Error(), "gi-1") {
			t.Errorf("Target of %+v: %v, want an error naming gi-1", a, err)
		}
	}
}

// sessionsPort is a game port hosting several sessions: it greets
// SESSIONS, answers each connection's JOIN with the next of answers (the
// last repeats) and, after a WELCOME, IWON with GAME OVER.
type sessionsPort struct {
	answers []string // "" hangs up instead
	heard   chan string
}

func (g sessionsPort) start(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for n := 0; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			g.serve(c, g.answers[min(n, len(g.answers)-1)])
		}
	}()
	return ln.Addr().String()
}

func (g sessionsPort) serve(c net.Conn, answer string) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintln(c, "SESSIONS us-west-0")
	sc := bufio.NewScanner(c)
	if !sc.Scan() {
		return
	}
	g.heard <- sc.Text()
	if answer == "" {
		return
	}
	fmt.Fprintln(c, answer)
	if !strings.HasPrefix(answer, "WELCOME ") || !sc.Scan() {
		return
	}
	g.heard <- sc.Text()
	fmt.Fprintln(c, "GAME OVER")
}

func TestSendIWONToSessions(t *testing.T) {
	tests := []struct {
		name      string
		answers   []string
		instance  string
		wantErr   error  // errors.Is
		wantText  string // in the error
		wantHeard []string
	}{
		{name: "joined and won", answers: []string{"WELCOME us-west-0 gi-1"}, instance: "gi-1",
			wantHeard: []string{"JOIN gi-1", "IWON"}},
		{name: "not linked yet, then let in", answers: []string{"NOT READY", "NOT READY", "WELCOME us-west-0 gi-1"}, instance: "gi-1",
			wantHeard: []string{"JOIN gi-1", "JOIN gi-1", "JOIN gi-1", "IWON"}},
		{name: "no such game", answers: []string{"NO SUCH GAME"}, instance: "gi-1", wantErr: ErrNoSuchGame,
			wantText: `hosts no session "gi-1"`, wantHeard: []string{"JOIN gi-1"}},
		{name: "already over", answers: []string{"GAME OVER"}, instance: "gi-1", wantErr: ErrGameOver, wantHeard: []string{"JOIN gi-1"}},
		{name: "welcomed to another game", answers: []string{"WELCOME us-west-0 gi-2"}, instance: "gi-1", wantErr: ErrOtherGame,
			wantHeard: []string{"JOIN gi-1"}},
		{name: "hangs up instead of answering", answers: []string{""}, instance: "gi-1", wantErr: errHungUp,
			wantText: "no answer to JOIN gi-1", wantHeard: []string{"JOIN gi-1"}},
		{name: "no id: nothing sent", answers: []string{"WELCOME us-west-0 gi-1"}, wantText: "hosts several sessions (server us-west-0): name the game instance"},
		{name: "an id that is no id: nothing sent", answers: []string{"WELCOME us-west-0 gi-1"}, instance: "gi-1\nIWON",
			wantText: "cannot JOIN: gameInstanceId may only contain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			port := sessionsPort{answers: tt.answers, heard: make(chan string, 8)}
			addr := port.start(t)
			out, err := SendIWONFor(context.Background(), addr, tt.instance)
			switch {
			case tt.wantErr == nil && tt.wantText == "":
				if err != nil || !out.GameOver || out.Server != "us-west-0" || out.GameInstanceID != "gi-1" {
					t.Fatalf("outcome %+v, %v", out, err)
				}
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			case err == nil || !strings.Contains(err.Error(), tt.wantText) || !strings.Contains(err.Error(), addr):
				t.Fatalf("error %v, want it to name %s and say %q", err, addr, tt.wantText)
			}
			var heard []string
			for done := false; !done; {
				select {
				case line := <-port.heard:
					heard = append(heard, line)
				case <-time.After(100 * time.Millisecond):
					done = true
				}
			}
			if strings.Join(heard, "|") != strings.Join(tt.wantHeard, "|") {
				t.Fatalf("the server heard %q, want %q", heard, tt.wantHeard)
			}
		})
	}
}

// A caller that treats ErrOtherGame as "not this server's game" (the
// dashboard answers 409) treats NO SUCH GAME the same.
func TestNoSuchGameIsAnotherGame(t *testing.T) {
	if !errors.Is(ErrNoSuchGame, ErrOtherGame) {
		t.Fatal("ErrNoSuchGame does not wrap ErrOtherGame")
	}
}
