package gfemu

import (
	"cmp"
	"maps"
	"net/http"
	"slices"
	"time"
)

// Server is a registered game server as the emulator holds it.
type Server struct {
	Address            string            // host:port as registered; the registry key
	Region             string            // "" = never allocated
	Priority           int               // lower is preferred
	Attributes         map[string]string // what the server offers
	RequiredAttributes []string          // keys a request must carry to match
	Callback           *Callback         // nil = allocated without a callback; URL always with a scheme
	Ports              map[string]int    // named ports, e.g. game, alloc, ping
	Timeout            time.Duration     // keep-alive window
	RegisteredAt       time.Time         // last (re-)registration; breaks priority ties
	ExpiresAt          time.Time         // gone once Now is after this
}

// entry adds the registration sequence, which orders ties when the injected
// clock gives several registrations the same time.
type entry struct {
	Server
	seq uint64
}

func (s Server) clone() Server {
	s.Attributes = maps.Clone(s.Attributes)
	s.RequiredAttributes = slices.Clone(s.RequiredAttributes)
	s.Ports = maps.Clone(s.Ports)
	if s.Callback != nil {
		cb := *s.Callback
		s.Callback = &cb
	}
	return s
}

// expireLocked drops servers whose keep-alive window has passed. Expiry is
// lazy: every access calls it, so the injected clock alone decides.
func (e *Emulator) expireLocked() {
	now := e.now()
	maps.DeleteFunc(e.servers, func(_ string, en *entry) bool { return now.After(en.ExpiresAt) })
}

// snapshotLocked expires, then copies the registry in registration order.
func (e *Emulator) snapshotLocked() []Server {
	e.expireLocked()
	entries := slices.SortedFunc(maps.Values(e.servers), func(a, b *entry) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]Server, len(entries))
	for i, en := range entries {
		out[i] = en.Server.clone()
	}
	return out
}

func registrationOf(s Server) registration {
	return registration{
		Address:   s.Address,
		Region:    s.Region,
		Priority:  s.Priority,
		Timeout:   int(s.Timeout / time.Second),
		ExpiresAt: s.ExpiresAt,
	}
}

// registryRequest authenticates a registry call and decodes its body into
// v (an empty one allowed when emptyOK), answering the failure itself.
func (e *Emulator) registryRequest(w http.ResponseWriter, r *http.Request, v any, emptyOK bool) bool {
	if _, ok := authorize(w, r, e.regTokens, "registry"); !ok {
		return false
	}
	if err := decodeJSON(w, r, v, emptyOK); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return false
	}
	return true
}

func (e *Emulator) handleRegister(w http.ResponseWriter, r *http.Request) {
	var req registerRequest
	if !e.registryRequest(w, r, &req, false) {
		return
	}
	s, err := serverOf(req)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	e.mu.Lock()
	e.expireLocked()
	now := e.now()
	s.RegisteredAt, s.ExpiresAt = now, now.Add(s.Timeout)
	_, replaced := e.servers[s.Address]
	e.seq++
	e.servers[s.Address] = &entry{Server: s, seq: e.seq}
	e.mu.Unlock()
	status := http.StatusCreated
	if replaced {
		status = http.StatusOK
	}
	writeJSON(w, status, registrationOf(s))
}

func (e *Emulator) handleKeepAlive(w http.ResponseWriter, r *http.Request) {
	var req keepAliveRequest
	if !e.registryRequest(w, r, &req, true) {
		return
	}
	timeout, err := timeoutOf(req.Timeout)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	addr := r.PathValue("addr")
	e.mu.Lock()
	e.expireLocked()
	en, ok := e.servers[addr]
	var s Server
	if ok {
		if req.Timeout != nil {
			en.Timeout = timeout
		}
		en.ExpiresAt = e.now().Add(en.Timeout)
		s = en.Server.clone()
	}
	e.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, notRegistered(addr))
		return
	}
	writeJSON(w, http.StatusOK, registrationOf(s))
}

func (e *Emulator) handleDeregister(w http.ResponseWriter, r *http.Request) {
	if _, ok := authorize(w, r, e.regTokens, "registry"); !ok {
		return
	}
	addr := r.PathValue("addr")
	e.mu.Lock()
	e.expireLocked()
	_, ok := e.servers[addr]
	delete(e.servers, addr)
	e.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, notRegistered(addr))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// notRegistered is the protocol's "removed" answer: re-register or shut down.
func notRegistered(addr string) string {
	return "game server " + addr + " is not registered (unknown, expired or allocated)"
}
