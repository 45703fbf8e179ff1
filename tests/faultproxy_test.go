//go:build integration

package tests

import (
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// faultProxy is a TCP proxy on loopback in front of a real component
// (DynamoDB Local, moto). Down makes the component unreachable the way an
// outage does: open connections are reset and new ones are reset on accept.
type faultProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]struct{}
}

func newFaultProxy(t *testing.T, targetURL string) *faultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{ln: ln, target: hostPort(t, targetURL), conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.SetDown(true)
	})
	return p
}

// Endpoint is the proxy's URL, to give an SDK client.
func (p *faultProxy) Endpoint() string { return "http://" + p.ln.Addr().String() }

// SetDown switches the outage on or off.
func (p *faultProxy) SetDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for c := range p.conns {
			reset(c)
		}
		clear(p.conns)
	}
}

func (p *faultProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		p.mu.Lock()
		down := p.down
		if !down {
			p.conns[c] = struct{}{}
		}
		p.mu.Unlock()
		if down {
			reset(c)
			continue
		}
		go p.pipe(c)
	}
}

func (p *faultProxy) pipe(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		reset(c)
		return
	}
	p.mu.Lock()
	p.conns[up] = struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// reset closes with RST, as a crashed or partitioned peer would.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

func hostPort(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		t.Fatalf("endpoint %q is not a URL", rawURL)
	}
	return u.Host
}
