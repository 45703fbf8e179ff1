package main

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strings"
	"sync/atomic"

	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
)

// callbackServer takes the Allocator's allocation callback and writes its
// payload to the payload file, as the sidecar does. Only the first valid
// one wins: a dedicated server hosts one game instance.
type callbackServer struct {
	token          string // the callback token we registered; never logged
	payloadFile    string
	serverName     string
	log            *log.Logger
	stopKeepAlives func()
	// allocated hears nil once the payload file is written (the game
	// server part reads it from there, as it would from the real
	// sidecar), or why it could not be. Buffered 1; sent to at most once.
	allocated chan<- error
	claimed   atomic.Bool
}

func (s *callbackServer) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /allocate", s.allocate)
	return mux
}

func (s *callbackServer) allocate(w http.ResponseWriter, r *http.Request) {
	// GameFabric's docs say only that the callback carries the registered
	// token in the Authorization header and recommend bearer
	// authentication, so both "<token>" and "Bearer <token>" are accepted.
	token := strings.TrimSpace(r.Header.Get("Authorization"))
	if scheme, t, ok := strings.Cut(token, " "); ok && strings.EqualFold(scheme, "Bearer") {
		token = strings.TrimSpace(t)
	}
	if subtle.ConstantTimeCompare([]byte(token), []byte(s.token)) != 1 {
		s.log.Printf("rejected an allocation callback from %s: wrong or missing token", r.RemoteAddr)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "wrong or missing callback token"})
		return
	}
	// The body goes to the payload file as received, unknown fields
	// included. The real sidecar writes whatever it gets; this one refuses
	// a payload the game server could not use, which the Allocator reports
	// as a failed callback instead of a server that never links.
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, gameserver.MaxPayloadSize))
	var a gameserver.Payload
	if err == nil {
		a, err = gameserver.ParsePayload(raw)
	}
	if errors.Is(err, gameserver.ErrIncompletePayload) {
		err = errors.New("payload must be a JSON object") // not a payload cut short
	}
	if err != nil {
		s.log.Printf("rejected an allocation callback: %v", err)
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	if !s.claimed.CompareAndSwap(false, true) {
		s.log.Printf("rejected a second allocation (%s): already allocated", a)
		writeJSON(w, http.StatusConflict, map[string]string{"error": "this game server is already allocated"})
		return
	}
	s.stopKeepAlives()
	// Not written atomically, no more than the sidecar's: WaitForPayload
	// waits out a file caught half-written.
	if err := os.WriteFile(s.payloadFile, raw, 0o600); err != nil {
		err = fmt.Errorf("writing the payload file: %w", err)
		s.log.Print(err)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "could not store the payload"})
		s.allocated <- err
		return
	}
	s.log.Printf("allocated to %s; payload written to %s", a, s.payloadFile)
	writeJSON(w, http.StatusOK, map[string]string{"gameInstanceId": a.GameInstanceID, "serverName": s.serverName})
	s.allocated <- nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
