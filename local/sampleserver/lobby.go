package main

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"time"
)

// joinTimeout bounds the wait for a player's JOIN line, so a silent
// connection does not hold a goroutine.
const joinTimeout = 5 * time.Second

// join greets a rooms server's player with "SESSIONS <server>" and seats
// it at the table its "JOIN <gameInstanceId>" names, or returns the
// refusal to say: NOT READY (not linked yet), GAME OVER (ended) or NO
// SUCH GAME; "" when the player said nothing in time.
func (g *game) join(c net.Conn, sc *bufio.Scanner) (*table, string) {
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := fmt.Fprintf(c, "SESSIONS %s\n", g.name); err != nil {
		return nil, ""
	}
	_ = c.SetReadDeadline(time.Now().Add(joinTimeout))
	if !sc.Scan() { // also a line longer than the scanner's bound
		return nil, ""
	}
	_ = c.SetReadDeadline(time.Time{})
	verb, id, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
	id = strings.TrimSpace(id)
	g.mu.Lock()
	defer g.mu.Unlock()
	t := g.tables[id]
	switch {
	case verb != "JOIN" || t == nil:
		return nil, "NO SUCH GAME"
	case t.over || g.closed:
		return nil, "GAME OVER"
	case !t.open:
		return nil, "NOT READY"
	}
	t.conns[c] = struct{}{}
	return t, ""
}
