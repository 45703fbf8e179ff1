package main

import (
	"bufio"
	"fmt"
	"log"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
)

// game is the TCP game port: a line protocol where a player wins by
// sending IWON. Players are let in only once the instance is linked,
// as the seed's server calls ConnectMorePlayers after Link.
//
// Each game instance the server hosts has a table of players. A
// dedicated server has one and greets "WELCOME <server> <id>" at once; a
// rooms server has one per session, greets "SESSIONS <server>" and seats
// a player by its "JOIN <id>" (seat).
type game struct {
	ln    net.Listener
	name  string
	rooms bool
	log   *log.Logger

	mu      sync.Mutex
	closed  bool              // close: no game is played any more
	current *table            // dedicated: the one table, nil until the payload is read
	tables  map[string]*table // rooms: live sessions' and the last maxEnded ended ones'
	ended   []string          // rooms: ended tables' ids, oldest first
	wg      sync.WaitGroup
}

// table is one game instance's players.
type table struct {
	g    *game
	id   string
	wins chan net.Conn // buffered 1: the first winner is the one that counts

	// Guarded by g.mu.
	open  bool // linked: players are let in
	over  bool
	conns map[net.Conn]struct{}
}

// maxEnded bounds the ended sessions a rooms server remembers, to answer
// GAME OVER rather than NO SUCH GAME to their late players.
const maxEnded = 256

func newGame(ln net.Listener, name string, rooms bool, logger *log.Logger) *game {
	return &game{ln: ln, name: name, rooms: rooms, log: logger, tables: map[string]*table{}}
}

// table seats the players of game instance id, not yet let in.
func (g *game) table(id string) *table {
	t := &table{g: g, id: id, wins: make(chan net.Conn, 1), conns: map[net.Conn]struct{}{}}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.rooms {
		g.tables[id] = t
	} else {
		g.current = t
	}
	return t
}

// serve accepts until the listener closes.
func (g *game) serve() {
	for {
		c, err := g.ln.Accept()
		if err != nil {
			return
		}
		g.mu.Lock()
		// A dedicated server's game is over for good; a rooms server's
		// next session may start any time.
		if g.closed || (!g.rooms && g.current != nil && g.current.over) {
			g.mu.Unlock()
			c.Close()
			return
		}
		g.wg.Go(func() { g.play(c) })
		g.mu.Unlock()
	}
}

func (g *game) play(c net.Conn) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 0, 256), 4096)
	t, refusal := g.seat(c, sc)
	if t == nil {
		// Connecting early is harmless (it doubles as a ping); say why
		// the door is shut.
		if refusal != "" {
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			fmt.Fprintln(c, refusal)
		}
		return
	}
	defer t.forget(c)
	g.log.Printf("player %s connected to %s", c.RemoteAddr(), t.id)
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(c, "WELCOME %s %s\n", g.name, t.id); err != nil {
		return
	}
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "IWON" {
			g.log.Printf("player %s won %s", c.RemoteAddr(), t.id)
			select {
			case t.wins <- c:
			default: // someone else won first
			}
		}
	}
	g.log.Printf("player %s disconnected", c.RemoteAddr())
}

// joinTimeout bounds the wait for a player's JOIN line, so a silent
// connection does not hold a goroutine.
const joinTimeout = 5 * time.Second

// seat seats c at its table, or returns the refusal to say: NOT READY
// (not linked yet), GAME OVER (ended) or NO SUCH GAME; "" to hang up. A
// dedicated server has one table. A rooms server greets "SESSIONS
// <server>" and seats the player at the table its "JOIN <gameInstanceId>"
// names.
func (g *game) seat(c net.Conn, sc *bufio.Scanner) (*table, string) {
	var verb, id string
	if g.rooms {
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		if _, err := fmt.Fprintf(c, "SESSIONS %s\n", g.name); err != nil {
			return nil, ""
		}
		_ = c.SetReadDeadline(time.Now().Add(joinTimeout))
		if !sc.Scan() { // also a line longer than the scanner's bound
			return nil, ""
		}
		_ = c.SetReadDeadline(time.Time{})
		verb, id, _ = strings.Cut(strings.TrimSpace(sc.Text()), " ")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	t := g.current
	if g.rooms {
		if t = g.tables[strings.TrimSpace(id)]; verb != "JOIN" || t == nil {
			return nil, "NO SUCH GAME"
		}
	}
	switch {
	case g.closed || (t != nil && t.over):
		return nil, "GAME OVER"
	case t == nil || !t.open:
		return nil, "NOT READY"
	}
	t.conns[c] = struct{}{}
	return t, ""
}

// letIn opens the table to players: the instance is linked.
func (t *table) letIn() {
	t.g.mu.Lock()
	defer t.g.mu.Unlock()
	t.open = true
}

func (t *table) forget(c net.Conn) {
	t.g.mu.Lock()
	defer t.g.mu.Unlock()
	delete(t.conns, c)
}

// finish tells the table's players the game is over and disconnects
// them. The winner hears it too, after the backend has recorded the end.
func (t *table) finish() {
	t.g.mu.Lock()
	conns := t.closeLocked()
	t.g.mu.Unlock()
	gameOver(conns)
}

// closeLocked marks the table over and returns its players to tell.
func (t *table) closeLocked() []net.Conn {
	g := t.g
	if !t.over && g.rooms && g.tables[t.id] == t {
		g.ended = append(g.ended, t.id)
		if len(g.ended) > maxEnded {
			if old := g.tables[g.ended[0]]; old != nil && old.over {
				delete(g.tables, g.ended[0])
			}
			g.ended = g.ended[1:]
		}
	}
	t.over = true
	return slices.Collect(maps.Keys(t.conns))
}

func gameOver(conns []net.Conn) {
	for _, c := range conns {
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		fmt.Fprintln(c, "GAME OVER")
		c.Close()
	}
}

// close stops accepting, ends every table (no game will be played here
// any more), disconnects everyone and waits for the connection goroutines.
func (g *game) close() {
	g.ln.Close()
	g.mu.Lock()
	g.closed = true
	var conns []net.Conn
	if g.current != nil {
		conns = g.current.closeLocked()
	}
	for _, t := range g.tables {
		conns = append(conns, t.closeLocked()...)
	}
	g.mu.Unlock()
	gameOver(conns)
	g.wg.Wait()
}
