package main

import (
	"bufio"
	"fmt"
	"log"
	"net"
	"strings"
	"sync"
	"time"
)

// game is the TCP game port: a line protocol where a player wins by
// sending IWON. Players are let in only once the instance is linked,
// as the seed's server calls ConnectMorePlayers after Link.
type game struct {
	ln   net.Listener
	name string
	log  *log.Logger
	wins chan net.Conn // buffered 1: the first winner is the one that counts

	mu       sync.Mutex
	instance string // "" until players are let in
	over     bool
	conns    map[net.Conn]struct{}
	wg       sync.WaitGroup
}

func newGame(ln net.Listener, name string, logger *log.Logger) *game {
	return &game{ln: ln, name: name, log: logger, wins: make(chan net.Conn, 1), conns: map[net.Conn]struct{}{}}
}

// serve accepts until the listener closes.
func (g *game) serve() {
	for {
		c, err := g.ln.Accept()
		if err != nil {
			return
		}
		g.mu.Lock()
		if g.over {
			g.mu.Unlock()
			c.Close()
			return
		}
		g.wg.Add(1)
		g.mu.Unlock()
		go func() {
			defer g.wg.Done()
			g.play(c)
		}()
	}
}

// open lets players in.
func (g *game) open(instance string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.instance = instance
}

func (g *game) play(c net.Conn) {
	defer c.Close()
	g.mu.Lock()
	instance, over := g.instance, g.over
	if instance != "" && !over {
		g.conns[c] = struct{}{}
	}
	g.mu.Unlock()
	if instance == "" || over {
		// Connecting early is harmless (it doubles as a ping); say why
		// the door is shut.
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		if over {
			fmt.Fprintln(c, "GAME OVER")
		} else {
			fmt.Fprintln(c, "NOT READY")
		}
		return
	}
	defer g.forget(c)
	g.log.Printf("player %s connected", c.RemoteAddr())
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(c, "WELCOME %s %s\n", g.name, instance); err != nil {
		return
	}
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 0, 256), 4096)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "IWON" {
			g.log.Printf("player %s won", c.RemoteAddr())
			select {
			case g.wins <- c:
			default: // someone else won first
			}
		}
	}
	g.log.Printf("player %s disconnected", c.RemoteAddr())
}

func (g *game) forget(c net.Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.conns, c)
}

// finish tells every player the game is over and disconnects them. The
// winner hears it too, after the backend has recorded the end.
func (g *game) finish() {
	g.mu.Lock()
	g.over = true
	conns := make([]net.Conn, 0, len(g.conns))
	for c := range g.conns {
		conns = append(conns, c)
	}
	g.mu.Unlock()
	for _, c := range conns {
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		fmt.Fprintln(c, "GAME OVER")
		c.Close()
	}
}

// close stops accepting, disconnects everyone and waits for the
// connection goroutines.
func (g *game) close() {
	g.ln.Close()
	g.finish()
	g.wg.Wait()
}
