package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
)

// newTestCallbackServer is a callback server on its own, without run.
func newTestCallbackServer(t *testing.T, token string) (*callbackServer, chan error) {
	allocated := make(chan error, 1)
	return &callbackServer{token: token, payloadFile: filepath.Join(t.TempDir(), "payload.json"), serverName: "s",
		log: log.New(io.Discard, "", 0), stopKeepAlives: func() {}, allocated: allocated}, allocated
}

func postAllocation(t *testing.T, h http.Handler, authorization string) int {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"GameInstanceId": "gi-1", "PartnerGameToken": "pgt",
		"pragmaBackendAddress": "http://127.0.0.1:1"})
	req := httptest.NewRequest(http.MethodPost, "/allocate", bytes.NewReader(body))
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// GameFabric's docs leave the header's form open (the token "in the
// Authorization header"; bearer authentication recommended), so both count.
func TestCallbackAcceptsTheTokenBareOrAsBearer(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name, authorization string
		want                int
	}{
		{"bare", token, http.StatusOK},
		{"Bearer", "Bearer " + token, http.StatusOK},
		{"bearer, any case", "bEaReR " + token, http.StatusOK},
		{"Bearer, extra spaces", "Bearer   " + token + " ", http.StatusOK},
		{"missing", "", http.StatusUnauthorized},
		{"Bearer without a token", "Bearer", http.StatusUnauthorized},
		{"Bearer with another token", "Bearer " + token[1:] + "0", http.StatusUnauthorized},
		{"another scheme", "Basic " + token, http.StatusUnauthorized},
		{"token twice", "Bearer Bearer " + token, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cb, allocated := newTestCallbackServer(t, token)
			if got := postAllocation(t, cb.routes(), tc.authorization); got != tc.want {
				t.Fatalf("status %d, want %d", got, tc.want)
			}
			if got := len(allocated); (got == 1) != (tc.want == http.StatusOK) {
				t.Fatalf("%d allocations signalled", got)
			}
		})
	}
}

// A server hosts one game: a second valid callback that reaches the
// endpoint before it closes is refused.
func TestCallbackClaimsOnce(t *testing.T) {
	cb, _ := newTestCallbackServer(t, "tok")
	if got := postAllocation(t, cb.routes(), "tok"); got != http.StatusOK {
		t.Fatalf("first: %d", got)
	}
	if got := postAllocation(t, cb.routes(), "Bearer tok"); got != http.StatusConflict {
		t.Fatalf("second: %d, want 409", got)
	}
}
