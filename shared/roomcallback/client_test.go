package roomcallback

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
)

const token = "callback-token-0123456789abcdefghijklmnop"

func TestCall(t *testing.T) {
	payload := allocation.Payload{GameInstanceID: "gi-1", PartnerGameToken: "partner", PragmaBackendAddress: "https://b", ServerArgs: "-x"}
	tests := []struct {
		name      string
		handler   http.HandlerFunc
		timeout   time.Duration
		closed    bool   // nothing listens
		query     string // on the callback URL
		ok        bool
		status    int
		timedOut  bool
		sent      bool
		errSubstr string
	}{
		{name: "200", handler: func(w http.ResponseWriter, r *http.Request) {}, ok: true, status: 200, sent: true},
		{name: "204 with a huge body ignored", handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(202)
			_, _ = w.Write([]byte(strings.Repeat("x", 1<<20)))
		}, ok: true, status: 202, sent: true},
		{name: "500", handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }, status: 500, sent: true,
			errSubstr: "session callback answered 500 Internal Server Error"},
		{name: "a redirect is not followed", handler: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://169.254.169.254/", http.StatusFound)
		}, status: 302, sent: true, errSubstr: "answered 302"},
		{name: "hangs", handler: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, timeout: 100 * time.Millisecond,
			timedOut: true, sent: true, errSubstr: "no answer in time"},
		{name: "nothing listens", closed: true, errSubstr: "not delivered: connect: connection refused"},
		{name: "a secret in the URL stays out of errors", closed: true, query: "?key=" + token, errSubstr: "not delivered"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got struct {
				auth, ctype string
				body        map[string]any
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got.auth, got.ctype = r.Header.Get("Authorization"), r.Header.Get("Content-Type")
				raw, _ := io.ReadAll(r.Body)
				_ = json.Unmarshal(raw, &got.body)
				tc.handler(w, r)
			}))
			defer srv.Close()
			url := srv.URL + "/sessions" + tc.query
			if tc.closed {
				ln, _ := net.Listen("tcp", "127.0.0.1:0")
				url = "http://" + ln.Addr().String() + "/sessions" + tc.query
				ln.Close()
			}
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			r := New(nil).Call(ctx, url, token, payload)
			if r.OK != tc.ok || r.Status != tc.status || r.TimedOut != tc.timedOut || r.Sent != tc.sent || !strings.Contains(r.Error, tc.errSubstr) {
				t.Fatalf("result = %+v", r)
			}
			if strings.Contains(r.Error, token) || strings.Contains(r.Error, "127.0.0.1") {
				t.Fatalf("the error names the URL or the token: %q", r.Error)
			}
			if !tc.closed {
				want := map[string]any{"GameInstanceId": "gi-1", "PartnerGameToken": "partner", "PartnerSocialToken": "", "pragmaBackendAddress": "https://b", "ServerArgs": "-x"}
				if got.auth != "Bearer "+token || got.ctype != "application/json" || len(got.body) != len(want) || got.body["GameInstanceId"] != "gi-1" {
					t.Fatalf("the server got %q %q %v", got.auth, got.ctype, got.body)
				}
			}
		})
	}
}
