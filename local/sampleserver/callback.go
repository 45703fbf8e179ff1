package main

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gamefabric-alloc/allocsvc/shared/gameserver"
)

// callbackServer takes the allocator's callback. Only the first valid one
// wins: a server hosts one game instance.
type callbackServer struct {
	token          string // the callback token we registered; never logged
	payloadFile    string
	serverName     string
	log            *log.Logger
	stopKeepAlives func()
	// allocated hears once the payload file is written; the game server
	// part reads it from there, as it would from the real sidecar.
	allocated chan<- struct{} // buffered 1; only ever sent to once
	failed    chan<- error    // buffered 1

	mu      sync.Mutex
	claimed bool
}

func (s *callbackServer) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /allocate", s.allocate)
	return mux
}

func (s *callbackServer) allocate(w http.ResponseWriter, r *http.Request) {
	if subtle.ConstantTimeCompare([]byte(callbackCredential(r)), []byte(s.token)) != 1 {
		s.log.Printf("rejected an allocation callback from %s: wrong or missing token", r.RemoteAddr)
		writeJSON(w, http.StatusUnauthorized, errorBody{"wrong or missing callback token"})
		return
	}
	raw, a, err := readAllocation(w, r)
	if err != nil {
		s.log.Printf("rejected an allocation callback: %v", err)
		writeJSON(w, http.StatusBadRequest, errorBody{err.Error()})
		return
	}
	if !s.claim() {
		s.log.Printf("rejected a second allocation (%s): already allocated", a)
		writeJSON(w, http.StatusConflict, errorBody{"this game server is already allocated"})
		return
	}
	s.stopKeepAlives()
	if err := writeFileAtomic(s.payloadFile, raw, 0o600); err != nil {
		err = fmt.Errorf("writing the payload file: %w", err)
		s.log.Print(err)
		writeJSON(w, http.StatusInternalServerError, errorBody{"could not store the payload"})
		s.failed <- err
		return
	}
	s.log.Printf("allocated to %s; payload written to %s", a, s.payloadFile)
	writeJSON(w, http.StatusOK, map[string]string{"gameInstanceId": a.GameInstanceID, "serverName": s.serverName})
	s.allocated <- struct{}{}
}

// callbackCredential is the token the allocator sent. GameFabric's docs
// say only that the callback carries the registered token in the
// Authorization header and recommend bearer authentication for the
// endpoint, so both "<token>" and "Bearer <token>" are accepted.
func callbackCredential(r *http.Request) string {
	v := strings.TrimSpace(r.Header.Get("Authorization"))
	if scheme, token, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(token)
	}
	return v
}

func (s *callbackServer) claim() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.claimed {
		return false
	}
	s.claimed = true
	return true
}

// readAllocation returns the body as received (written to the payload
// file verbatim, unknown fields included) and its decoded form. The real
// sidecar writes whatever it gets; this one refuses a payload the game
// server could not use, which the allocator reports as a failed callback
// instead of a server that never links.
func readAllocation(w http.ResponseWriter, r *http.Request) ([]byte, gameserver.Payload, error) {
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, gameserver.MaxPayloadSize)); err != nil {
		return nil, gameserver.Payload{}, fmt.Errorf("reading the payload: %w", err)
	}
	raw := bytes.TrimSpace(buf.Bytes())
	a, err := gameserver.ParsePayload(raw)
	if errors.Is(err, gameserver.ErrIncompletePayload) {
		err = errors.New("payload must be a JSON object")
	}
	return raw, a, err
}

type errorBody struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// writeFileAtomic writes through a temporary file in the same directory
// and renames it, so a reader polling the path never sees half a payload.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // a no-op once renamed
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
