// Package player does what a player of the sample game does to end it:
// connect to the game server's game port and say IWON. The game server
// then ends the game instance through the API, as a real game would when
// a match is decided.
//
// The game port speaks lines (local/sampleserver/game.go): a dedicated
// server greets "WELCOME <server> <gameInstanceId>" once its instance is
// linked ("NOT READY" before, "GAME OVER" after); a server hosting several
// sessions (rooms) greets "SESSIONS <server>", the player answers "JOIN
// <gameInstanceId>" and the server one of those lines, or "NO SUCH GAME".
// Then a player's "IWON" wins that game, and the server answers "GAME
// OVER" once the backend has recorded the end.
package player

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/wait"
)

// DefaultTimeout bounds a whole SendIWON when ctx has no earlier deadline:
// the server's end call to the API is bounded at 4 s, so it answers well
// within it.
const DefaultTimeout = 15 * time.Second

// The game server's answers that mean no game can be won there.
var (
	// ErrNotReady: the server has no linked game instance yet.
	ErrNotReady = errors.New("the game server is not letting players in yet (its game instance has not linked)")
	// ErrGameOver: the game on that server has already ended.
	ErrGameOver = errors.New("the game on that server is already over")
	// ErrOtherGame: the server hosts another game instance than the one asked for.
	ErrOtherGame = errors.New("the game server hosts another game instance")
	// ErrNoSuchGame: a server hosting several sessions has none with the
	// id asked for. It wraps ErrOtherGame, which callers already treat as
	// "not this server's game".
	ErrNoSuchGame = fmt.Errorf("the game server hosts no such game instance: %w", ErrOtherGame)
)

// Outcome is what the game server said.
type Outcome struct {
	// Welcome is its "WELCOME <server> <gameInstanceId>": the greeting, or
	// the answer to JOIN on a server hosting several sessions.
	Welcome string
	// Server and GameInstanceID are read from the greeting.
	Server, GameInstanceID string
	// GameOver: it answered GAME OVER after the win, which it does once
	// the backend recorded the end. False when it hung up without saying so.
	GameOver bool
}

// NotReadyPatience is how long a NOT READY is asked again, every
// notReadyPause: a game server links before it lets players in
// (docs/gameservers.md: link, then accept players), so for a moment after
// the record says Linked its door is still shut.
const (
	NotReadyPatience = 2 * time.Second
	notReadyPause    = 100 * time.Millisecond
)

// SendIWONFor connects to address (host:port of a game port) and wins the
// game hosted there, first checking the server greets for gameInstanceID
// ("" skips the check): a server that exited after its game may have been
// replaced by one hosting another game on the same port.
// A server hosting several sessions is asked to JOIN gameInstanceID,
// which is then required, and ends that session only. A server (or
// session) still NOT READY after NotReadyPatience is ErrNotReady.
func SendIWONFor(ctx context.Context, address, gameInstanceID string) (Outcome, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	giveUp := time.Now().Add(NotReadyPatience)
	for {
		out, err := sendOnce(ctx, address, gameInstanceID)
		if !errors.Is(err, ErrNotReady) || time.Now().Add(notReadyPause).After(giveUp) {
			return out, err
		}
		if wait.Sleep(ctx, notReadyPause) != nil {
			return out, err
		}
	}
}

// sendOnce is one connection: greeting (and JOIN), IWON, GAME OVER.
func sendOnce(ctx context.Context, address, gameInstanceID string) (Outcome, error) {
	var out Outcome
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", address)
	if err != nil {
		return out, fmt.Errorf("connect to the game port %s: %w", address, err)
	}
	defer conn.Close()
	// ctx's end (its deadline included) unblocks the reads below at once;
	// ctx.Err() then says why.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()

	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 0, 256), 4096) // a greeting is one short line
	if !sc.Scan() {
		return out, fmt.Errorf("game port %s: no greeting: %w", address, cmp.Or(ctx.Err(), sc.Err(), errHungUp))
	}
	greeting := strings.TrimSpace(sc.Text())
	if server, ok := strings.CutPrefix(greeting, "SESSIONS "); ok {
		if greeting, err = join(ctx, conn, sc, address, server, gameInstanceID); err != nil {
			return out, err
		}
	}
	switch {
	case greeting == "NOT READY":
		return out, fmt.Errorf("game port %s: %w", address, ErrNotReady)
	case greeting == "GAME OVER":
		return out, fmt.Errorf("game port %s: %w", address, ErrGameOver)
	case !strings.HasPrefix(greeting, "WELCOME "):
		return out, fmt.Errorf("game port %s: unexpected greeting %.80q", address, greeting)
	}
	out.Welcome = greeting
	if f := strings.Fields(greeting); len(f) == 3 {
		out.Server, out.GameInstanceID = f[1], f[2]
	}
	if gameInstanceID != "" && out.GameInstanceID != gameInstanceID {
		return out, fmt.Errorf("game port %s hosts %q, not %q: %w", address, out.GameInstanceID, gameInstanceID, ErrOtherGame)
	}
	if _, err := fmt.Fprintln(conn, "IWON"); err != nil {
		return out, fmt.Errorf("game port %s: send IWON: %w", address, err)
	}
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "GAME OVER" {
			out.GameOver = true
			return out, nil
		}
	}
	if err := cmp.Or(ctx.Err(), sc.Err()); err != nil {
		return out, fmt.Errorf("game port %s: sent IWON, then no GAME OVER: %w", address, err)
	}
	return out, nil // it hung up: the win was heard, the end unconfirmed
}

// join asks a server hosting several sessions for gameInstanceID's and
// returns its answer: the WELCOME, NOT READY or GAME OVER a dedicated
// server would greet with. NO SUCH GAME is ErrNoSuchGame.
func join(ctx context.Context, conn net.Conn, sc *bufio.Scanner, address, server, gameInstanceID string) (string, error) {
	if gameInstanceID == "" {
		return "", fmt.Errorf("game port %s hosts several sessions (server %.80s): name the game instance to end", address, server)
	}
	// The id goes on a line of its own: one with a space or a newline
	// would say something else.
	if msg := gameinstance.IDProblem(gameInstanceID); msg != "" {
		return "", fmt.Errorf("game port %s: cannot JOIN: %s", address, msg)
	}
	if _, err := fmt.Fprintf(conn, "JOIN %s\n", gameInstanceID); err != nil {
		return "", fmt.Errorf("game port %s: send JOIN: %w", address, err)
	}
	if !sc.Scan() {
		return "", fmt.Errorf("game port %s: no answer to JOIN %s: %w", address, gameInstanceID, cmp.Or(ctx.Err(), sc.Err(), errHungUp))
	}
	answer := strings.TrimSpace(sc.Text())
	if answer == "NO SUCH GAME" {
		return "", fmt.Errorf("game port %s hosts no session %q: %w", address, gameInstanceID, ErrNoSuchGame)
	}
	return answer, nil
}

// errHungUp: the server closed the connection where a line was due.
var errHungUp = errors.New("the server hung up")

// Target is the game port where a player connects to end allocation a.
// It fails when no player can: a Linked instance's server lets players in;
// an Allocated one's may have linked since a was read (if not, it answers
// NOT READY: ErrNotReady).
func Target(a *apishape.Allocation) (string, error) {
	id := a.GameInstanceID
	switch a.State {
	case "Linked", "Allocated":
	case "Allocating":
		return "", fmt.Errorf("%s is Allocating: it has no game server yet; try again in a moment", id)
	case "Ended", "Unhealthy":
		return "", fmt.Errorf("%s is already %s", id, a.State)
	case "Failed":
		return "", fmt.Errorf("%s is Failed: no game server was allocated", id)
	default:
		return "", fmt.Errorf("%s is in state %q, which no player can end", id, a.State)
	}
	if a.Server == nil {
		return "", fmt.Errorf("%s is %s but has no game server in its record", id, a.State)
	}
	addr, err := GameAddress(a.Server)
	if err != nil {
		return "", fmt.Errorf("%s: %w", id, err)
	}
	return addr, nil
}

// GameAddress is where players of an allocated game server connect: the
// server's IP (else the host of its address) with its "game" port, else its
// address as it is.
func GameAddress(s *apishape.Server) (string, error) {
	host, port, err := net.SplitHostPort(s.Address)
	host = cmp.Or(s.IP, host)
	if p := s.Ports["game"]; p > 0 && p < 65536 && host != "" {
		return net.JoinHostPort(host, strconv.Itoa(p)), nil
	}
	if err == nil && port != "" {
		return s.Address, nil
	}
	return "", fmt.Errorf("the server (address %q, ports %v) has no game port", s.Address, s.Ports)
}
