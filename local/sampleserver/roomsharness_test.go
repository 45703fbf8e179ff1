package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/testkit"
	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
)

// roomsServer is a harness whose server offers 4 rooms, allocated for
// gi-42 and linked. offer is its first link's room offer.
type roomsServer struct {
	*harness
	reg   registration
	offer gameserver.RoomOffer
}

func startRoomsServer(t *testing.T, tune func(*harness)) *roomsServer {
	t.Helper()
	h := startHarness(t, func(h *harness) {
		h.cfg.Rooms = 4
		if tune != nil {
			tune(h)
		}
	})
	reg := h.registration()
	if status, _ := h.callback(reg, reg.Callback.Token, h.payload); status != http.StatusOK {
		t.Fatalf("allocation callback status %d", status)
	}
	var offer gameserver.RoomOffer
	testkit.WaitFor(t, 10*time.Second, "gi-42 to link with rooms", func() bool {
		calls, _ := h.backend.history()
		for _, c := range calls {
			if c.op == "link" && c.id == "gi-42" && c.link.Rooms != nil {
				offer = *c.link.Rooms
				return true
			}
		}
		return false
	})
	r := &roomsServer{harness: h, reg: reg, offer: offer}
	t.Cleanup(func() {
		if strings.Contains(h.logs.String(), offer.CallbackToken) {
			t.Error("the session callback token appears in the logs")
		}
		h.noSecretsLogged(reg)
	})
	return r
}

// session is the payload the service sends for another game instance;
// the backend knows it by token.
func (r *roomsServer) session(id, token string) map[string]any {
	r.backend.instance(id, token)
	return map[string]any{"GameInstanceId": id, "PartnerGameToken": token, "PartnerSocialToken": "",
		"pragmaBackendAddress": r.backend.URL, "ServerArgs": ""}
}

// deliver posts a session to the callback as the service would.
func (r *roomsServer) deliver(payload map[string]any) int {
	r.t.Helper()
	raw, _ := json.Marshal(payload)
	req, _ := http.NewRequest(http.MethodPost, r.offer.CallbackURL, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+r.offer.CallbackToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// calls is what the backend recorded of op for id.
func (r *roomsServer) calls(op, id string) []backendCall {
	all, _ := r.backend.history()
	var out []backendCall
	for _, c := range all {
		if c.op == op && c.id == id {
			out = append(out, c)
		}
	}
	return out
}

func (r *roomsServer) waitLinked(id string) {
	r.t.Helper()
	testkit.WaitFor(r.t, 10*time.Second, id+" to link", func() bool { return len(r.calls("link", id)) > 0 })
}

// player is one connection to the game port that joined a session.
type player struct {
	conn net.Conn
	rd   *bufio.Reader
}

// join connects, reads the SESSIONS greeting, sends JOIN id and returns
// the answer.
func (r *roomsServer) join(id string) (*player, string) {
	r.t.Helper()
	conn, err := net.Dial("tcp", r.reg.Address)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	p := &player{conn: conn, rd: bufio.NewReader(conn)}
	if greeting := p.line(); greeting != "SESSIONS "+r.serverName() {
		r.t.Fatalf("greeting %q", greeting)
	}
	if _, err := conn.Write([]byte("JOIN " + id + "\n")); err != nil {
		r.t.Fatal(err)
	}
	return p, p.line()
}

func (p *player) line() string {
	s, _ := p.rd.ReadString('\n')
	return strings.TrimSpace(s)
}

func (r *roomsServer) serverName() string {
	_, port, _ := net.SplitHostPort(r.reg.Address)
	return "sample-us-west-" + port
}

// running fails the test if run has returned.
func (r *roomsServer) running() {
	r.t.Helper()
	select {
	case err := <-r.done:
		r.done <- err
		r.t.Fatalf("run returned %v; a rooms server keeps running", err)
	default:
	}
}
