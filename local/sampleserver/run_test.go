package main

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/testkit"
	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
)

func TestRunEndToEnd(t *testing.T) {
	h := startHarness(t, nil)
	reg := h.registration()

	_, gamePortStr, _ := net.SplitHostPort(reg.Address)
	gamePort, _ := strconv.Atoi(gamePortStr)
	allocPort := reg.Ports["alloc"]
	if !strings.HasPrefix(reg.Address, "127.0.0.1:") || reg.Region != "us-west" || reg.Priority != 1 || reg.Timeout != 1 ||
		!reflect.DeepEqual(reg.Attributes, h.cfg.Attributes) || !reflect.DeepEqual(reg.RequiredAttributes, []string{"armadaset"}) ||
		!reflect.DeepEqual(reg.Ports, map[string]int{"game": gamePort, "alloc": allocPort, "ping": gamePort}) ||
		reg.Callback.URL != "127.0.0.1:"+strconv.Itoa(allocPort)+"/allocate" || len(reg.Callback.Token) != 26 {
		t.Fatalf("unexpected registration %+v", reg)
	}
	testkit.WaitFor(t, 10*time.Second, "a keep-alive", func() bool {
		_, kas, _ := h.registry.snapshot()
		return len(kas) > 0 && kas[0] == reg.Address
	})

	// Before the allocation the game port turns players away.
	if line := greet(t, reg.Address); line != "NOT READY" {
		t.Fatalf("early player got %q", line)
	}

	status, answer := h.callback(reg, "Bearer "+reg.Callback.Token, h.payload)
	wantName := "sample-us-west-" + gamePortStr
	if status != http.StatusOK || !reflect.DeepEqual(answer, map[string]string{"gameInstanceId": "gi-42", "serverName": wantName}) {
		t.Fatalf("callback: %d %v", status, answer)
	}

	fi, err := os.Stat(h.cfg.PayloadFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("payload file mode %v, want 0600", fi.Mode().Perm())
	}
	raw, _ := os.ReadFile(h.cfg.PayloadFile)
	var written map[string]any
	if err := json.Unmarshal(raw, &written); err != nil || !reflect.DeepEqual(written, h.payload) {
		t.Fatalf("payload file %s: %v", raw, err)
	}

	testkit.WaitFor(t, 10*time.Second, "a link and a heartbeat", func() bool {
		links, hbs, _ := h.backend.snapshot()
		return len(links) == 1 && hbs > 0
	})
	links, _, _ := h.backend.snapshot()
	if hb := h.backend.heartbeatCalls()[0]; hb.all || hb.id != "gi-42" {
		t.Fatalf("a dedicated server's heartbeat %+v, want gi-42's own", hb)
	}
	if want := (gameserver.LinkRequest{Address: reg.Address, Ports: map[string]int{"game": gamePort}, ServerName: wantName}); !reflect.DeepEqual(links[0], want) {
		t.Fatalf("link body %+v, want %+v", links[0], want)
	}
	h.callbackEndpointCloses(reg)
	// The keep-alives stopped with the allocation.
	_, kas, _ := h.registry.snapshot()
	time.Sleep(250 * time.Millisecond)
	if _, later, _ := h.registry.snapshot(); len(later) != len(kas) {
		t.Fatalf("keep-alives went on after the allocation: %d then %d", len(kas), len(later))
	}

	conn, err := net.Dial("tcp", reg.Address)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	rd := bufio.NewReader(conn)
	if line, _ := rd.ReadString('\n'); line != "WELCOME "+wantName+" gi-42\n" {
		t.Fatalf("greeting %q", line)
	}
	if _, err := conn.Write([]byte("hello\nIWON\n")); err != nil {
		t.Fatal(err)
	}
	if line, _ := rd.ReadString('\n'); line != "GAME OVER\n" {
		t.Fatalf("after IWON got %q", line)
	}
	if err := h.wait(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if _, _, ends := h.backend.snapshot(); !reflect.DeepEqual(ends, []string{"IWON"}) {
		t.Fatalf("ends %v", ends)
	}
	if _, _, deletes := h.registry.snapshot(); len(deletes) != 0 {
		t.Fatalf("deregistered an allocated server: %v", deletes)
	}
	h.noSecretsLogged(reg)
}

func greet(t *testing.T, addr string) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	line, _ := bufio.NewReader(conn).ReadString('\n')
	return strings.TrimSpace(line)
}

func TestCallbackRejectsAndTerminate(t *testing.T) {
	h := startHarness(t, nil)
	reg := h.registration()

	missing := map[string]any{"GameInstanceId": "gi-42", "pragmaBackendAddress": h.backend.URL}
	badURL := map[string]any{"GameInstanceId": "gi-42", "PartnerGameToken": "x", "pragmaBackendAddress": "localhost:10100"}
	for _, tc := range []struct {
		name, token string
		body        any
		want        int
	}{
		{"no token", "", h.payload, http.StatusUnauthorized},
		{"wrong token", "0123456789abcdef0123456789abcdef", h.payload, http.StatusUnauthorized},
		{"registry token", h.registry.token, h.payload, http.StatusUnauthorized},
		{"Bearer registry token", "Bearer " + h.registry.token, h.payload, http.StatusUnauthorized},
		{"not an object", reg.Callback.Token, []string{"GameInstanceId"}, http.StatusBadRequest},
		{"missing token", reg.Callback.Token, missing, http.StatusBadRequest},
		{"backend not a URL", reg.Callback.Token, badURL, http.StatusBadRequest},
		{"first", reg.Callback.Token, h.payload, http.StatusOK},
	} {
		if status, _ := h.callback(reg, tc.token, tc.body); status != tc.want {
			t.Fatalf("%s: status %d, want %d", tc.name, status, tc.want)
		}
	}
	h.callbackEndpointCloses(reg)
	testkit.WaitFor(t, 10*time.Second, "a link", func() bool { links, _, _ := h.backend.snapshot(); return len(links) == 1 })

	h.cancel() // SIGTERM after the allocation
	if err := h.wait(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if _, _, ends := h.backend.snapshot(); !reflect.DeepEqual(ends, []string{"Terminated"}) {
		t.Fatalf("ends %v", ends)
	}
	h.noSecretsLogged(reg)
}

func TestHeartbeatEndedShutsDown(t *testing.T) {
	for _, state := range []string{"Ended", "Unhealthy"} {
		t.Run(state, func(t *testing.T) {
			h := startHarness(t, nil)
			reg := h.registration()
			if status, _ := h.callback(reg, reg.Callback.Token, h.payload); status != http.StatusOK {
				t.Fatalf("callback status %d", status)
			}
			testkit.WaitFor(t, 10*time.Second, "a heartbeat", func() bool { _, hbs, _ := h.backend.snapshot(); return hbs > 0 })
			h.backend.setHeartbeatState(state)
			if err := h.wait(); err != nil {
				t.Fatalf("run: %v", err)
			}
			if _, _, ends := h.backend.snapshot(); len(ends) != 0 {
				t.Fatalf("ended an instance the backend had already closed: %v", ends)
			}
		})
	}
}

func TestStopBeforeAllocationDeregisters(t *testing.T) {
	h := startHarness(t, nil)
	reg := h.registration()
	h.cancel()
	if err := h.wait(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if _, _, deletes := h.registry.snapshot(); !reflect.DeepEqual(deletes, []string{reg.Address}) {
		t.Fatalf("deletes %v, want [%s]", deletes, reg.Address)
	}
}

func TestIdleShutdown(t *testing.T) {
	h := startHarness(t, func(h *harness) { h.cfg.IdleShutdown = 300 * time.Millisecond })
	reg := h.registration()
	if err := h.wait(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if _, _, deletes := h.registry.snapshot(); !reflect.DeepEqual(deletes, []string{reg.Address}) {
		t.Fatalf("deletes %v", deletes)
	}
}

func TestRegistryFailuresAndRemovalAreRetried(t *testing.T) {
	h := startHarness(t, func(h *harness) { h.registry.registerFailures, h.registry.keepAlive404s = 1, 1 })
	testkit.WaitFor(t, 10*time.Second, "a registration after a 500 and another after a 404", func() bool {
		regs, _, _ := h.registry.snapshot()
		return len(regs) >= 2
	})
	reg := h.registration()
	if status, _ := h.callback(reg, reg.Callback.Token, h.payload); status != http.StatusOK {
		t.Fatalf("callback status %d", status)
	}
	testkit.WaitFor(t, 10*time.Second, "a link", func() bool { links, _, _ := h.backend.snapshot(); return len(links) == 1 })
	// Having registered twice, it removes any registration that may have
	// outlived the allocation.
	if _, _, deletes := h.registry.snapshot(); !reflect.DeepEqual(deletes, []string{reg.Address}) {
		t.Fatalf("deletes %v", deletes)
	}
}

func TestLinkRetriesTransientFailures(t *testing.T) {
	h := startHarness(t, func(h *harness) {
		h.backend.linkStatuses = []int{http.StatusServiceUnavailable, http.StatusBadGateway}
	})
	reg := h.registration()
	h.callback(reg, reg.Callback.Token, h.payload)
	testkit.WaitFor(t, 10*time.Second, "a link", func() bool { links, _, _ := h.backend.snapshot(); return len(links) == 1 })
}

func TestLinkRefusedIsFinal(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusConflict} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			h := startHarness(t, func(h *harness) { h.backend.linkStatuses = []int{status} })
			reg := h.registration()
			h.callback(reg, reg.Callback.Token, h.payload)
			err := h.wait()
			if err == nil || !strings.Contains(err.Error(), "HTTP "+strconv.Itoa(status)) {
				t.Fatalf("run returned %v, want the link's HTTP %d", err, status)
			}
			if _, _, ends := h.backend.snapshot(); len(ends) != 0 {
				t.Fatalf("ends %v", ends)
			}
		})
	}
}

func TestMaxGameLength(t *testing.T) {
	h := startHarness(t, func(h *harness) { h.cfg.MaxGameLength = 400 * time.Millisecond })
	reg := h.registration()
	h.callback(reg, reg.Callback.Token, h.payload)
	// Heartbeats start once players are let in; the link alone is
	// recorded before the server has read its answer.
	testkit.WaitFor(t, 10*time.Second, "a heartbeat", func() bool { _, hbs, _ := h.backend.snapshot(); return hbs > 0 })
	conn, err := net.Dial("tcp", reg.Address)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	rd := bufio.NewReader(conn)
	if line, _ := rd.ReadString('\n'); !strings.HasPrefix(line, "WELCOME ") {
		t.Fatalf("greeting %q", line)
	}
	if line, _ := rd.ReadString('\n'); line != "GAME OVER\n" {
		t.Fatalf("got %q, want GAME OVER", line)
	}
	if err := h.wait(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if _, _, ends := h.backend.snapshot(); !slices.Equal(ends, []string{"MaxGameLength"}) {
		t.Fatalf("ends %v", ends)
	}
}

func TestStalePayloadFileIsRemoved(t *testing.T) {
	dir := t.TempDir()
	stale := dir + "/payload.json"
	if err := os.WriteFile(stale, []byte(`{"GameInstanceId":"old"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, func(h *harness) { h.cfg.PayloadFile = stale })
	h.registration()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale payload still there: %v", err)
	}
}
