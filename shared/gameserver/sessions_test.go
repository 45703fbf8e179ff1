package gameserver

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// sessionBody is a valid session payload for id.
func sessionBody(id string) string {
	return `{"GameInstanceId":"` + id + `","PartnerGameToken":"` + testToken + `","PartnerSocialToken":"",` +
		`"pragmaBackendAddress":"http://127.0.0.1:1","ServerArgs":""}`
}

// newTestCallback is a SessionCallback logging to the returned buffer;
// the test fails if a token reaches it.
func newTestCallback(t *testing.T, o SessionCallbackOptions) (*SessionCallback, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	o.Token = testCallbackToken
	o.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	cb, err := NewSessionCallback(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s := logs.String(); strings.Contains(s, testCallbackToken) || strings.Contains(s, testToken) {
			t.Errorf("a token appears in the logs:\n%s", s)
		}
	})
	return cb, logs
}

// post sends one callback; auth "" sends no Authorization header.
func post(cb http.Handler, method, auth, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "/sessions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	cb.ServeHTTP(rec, req)
	return rec
}

func TestNewSessionCallbackValidates(t *testing.T) {
	tests := []struct {
		name       string
		o          SessionCallbackOptions
		wantBuffer int
		want       []string // parts of the error; none: accepted
	}{
		{"defaults mint a token", SessionCallbackOptions{}, DefaultSessionBuffer, nil},
		{"a given token", SessionCallbackOptions{Token: testCallbackToken, Buffer: 1, Remember: 1}, 1, nil},
		{"bad token, not quoted", SessionCallbackOptions{Token: "short-secret"}, 0, []string{"Token must be 32-1024 characters"}},
		{"every problem at once", SessionCallbackOptions{Token: "x y", Buffer: -1, Remember: -1}, 0,
			[]string{"Token", "Buffer must not be negative", "Remember must not be negative"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cb, err := NewSessionCallback(tc.o)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				offer := cb.Offer("http://h:1/sessions", 4)
				if offer.Validate() != nil || cap(cb.Sessions()) != tc.wantBuffer {
					t.Fatalf("offer %v (%v), buffer %d", offer, offer.Validate(), cap(cb.Sessions()))
				}
				return
			}
			for _, want := range tc.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v lacks %q", err, want)
				}
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q quotes the token", err)
			}
		})
	}
}

func TestSessionCallbackAnswers(t *testing.T) {
	bearer := "Bearer " + testCallbackToken
	tests := []struct {
		name, method, auth, body string
		want                     int
	}{
		{"delivered", http.MethodPost, bearer, sessionBody("gi-2"), http.StatusOK},
		{"scheme in any case", http.MethodPost, "bEaReR " + testCallbackToken, sessionBody("gi-2"), http.StatusOK},
		{"GET", http.MethodGet, bearer, "", http.StatusMethodNotAllowed},
		{"PUT", http.MethodPut, bearer, sessionBody("gi-2"), http.StatusMethodNotAllowed},
		{"no token", http.MethodPost, "", sessionBody("gi-2"), http.StatusUnauthorized},
		{"the bare token", http.MethodPost, testCallbackToken, sessionBody("gi-2"), http.StatusUnauthorized},
		{"another token", http.MethodPost, "Bearer " + testCallbackToken[1:] + "x", sessionBody("gi-2"), http.StatusUnauthorized},
		{"a prefix of the token", http.MethodPost, "Bearer " + testCallbackToken[:32], sessionBody("gi-2"), http.StatusUnauthorized},
		{"another scheme", http.MethodPost, "Basic " + testCallbackToken, sessionBody("gi-2"), http.StatusUnauthorized},
		{"too large", http.MethodPost, bearer, `{"pad":"` + strings.Repeat("x", MaxPayloadSize) + `"}`, http.StatusRequestEntityTooLarge},
		{"empty", http.MethodPost, bearer, "", http.StatusBadRequest},
		{"half an object", http.MethodPost, bearer, sessionBody("gi-2")[:20], http.StatusBadRequest},
		{"not an object", http.MethodPost, bearer, `["gi-2"]`, http.StatusBadRequest},
		{"fields missing", http.MethodPost, bearer, `{"GameInstanceId":"gi-2"}`, http.StatusBadRequest},
		{"bad id", http.MethodPost, bearer, sessionBody("gi 2"), http.StatusBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cb, _ := newTestCallback(t, SessionCallbackOptions{})
			rec := post(cb, tc.method, tc.auth, tc.body)
			if rec.Code != tc.want {
				t.Fatalf("status %d (%s), want %d", rec.Code, rec.Body, tc.want)
			}
			var answer map[string]string
			if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
				t.Fatalf("answer %q: %v", rec.Body, err)
			}
			if strings.Contains(rec.Body.String(), "secret") {
				t.Fatalf("answer %q quotes a token", rec.Body)
			}
			switch tc.want {
			case http.StatusOK:
				if p := <-cb.Sessions(); p.GameInstanceID != "gi-2" || p.PartnerGameToken != testToken || answer["gameInstanceId"] != "gi-2" {
					t.Fatalf("delivered %#v, answered %v", p, answer)
				}
			case http.StatusMethodNotAllowed:
				if rec.Header().Get("Allow") != http.MethodPost {
					t.Fatalf("Allow %q", rec.Header().Get("Allow"))
				}
			case http.StatusUnauthorized:
				if rec.Header().Get("WWW-Authenticate") != "Bearer" {
					t.Fatalf("WWW-Authenticate %q", rec.Header().Get("WWW-Authenticate"))
				}
			}
			if tc.want != http.StatusOK && (len(cb.Sessions()) != 0 || answer["error"] == "") {
				t.Fatalf("refused, yet %d delivered; answer %v", len(cb.Sessions()), answer)
			}
		})
	}
}

// A step posts the session for id and wants the status; read takes a
// session off the channel first.
type step struct {
	read bool
	stop bool
	id   string
	want int
}

func TestSessionCallbackDeliversEachSessionOnce(t *testing.T) {
	tests := []struct {
		name     string
		o        SessionCallbackOptions
		steps    []step
		wantRead []string // every session delivered, in order
	}{
		{"a repeated delivery starts nothing", SessionCallbackOptions{}, []step{
			{id: "gi-2", want: 200}, {id: "gi-2", want: 200}, {id: "gi-3", want: 200}, {read: true, id: "gi-2", want: 200},
		}, []string{"gi-2", "gi-3"}},
		{"full buffer: 503, and the refused session may come again", SessionCallbackOptions{Buffer: 1}, []step{
			{id: "gi-2", want: 200}, {id: "gi-3", want: 503}, {id: "gi-2", want: 200}, {read: true, id: "gi-3", want: 200},
		}, []string{"gi-2", "gi-3"}},
		{"stopped: new ones 503, repeated ones still 200", SessionCallbackOptions{}, []step{
			{id: "gi-2", want: 200}, {stop: true, id: "gi-3", want: 503}, {id: "gi-2", want: 200}, {stop: true, id: "gi-4", want: 503},
		}, []string{"gi-2"}},
		{"only the last Remember ids are kept", SessionCallbackOptions{Remember: 2}, []step{
			{id: "gi-2", want: 200}, {id: "gi-3", want: 200}, {id: "gi-3", want: 200}, {id: "gi-4", want: 200}, {id: "gi-2", want: 200},
			{id: "gi-4", want: 200},
		}, []string{"gi-2", "gi-3", "gi-4", "gi-2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cb, _ := newTestCallback(t, tc.o)
			var read []string
			take := func() {
				if p, ok := <-cb.Sessions(); ok {
					read = append(read, p.GameInstanceID)
				}
			}
			for i, s := range tc.steps {
				if s.read {
					take()
				}
				if s.stop {
					cb.Stop() // twice is harmless
				}
				if rec := post(cb, http.MethodPost, "Bearer "+testCallbackToken, sessionBody(s.id)); rec.Code != s.want {
					t.Fatalf("step %d (%s): status %d (%s), want %d", i, s.id, rec.Code, rec.Body, s.want)
				}
			}
			cb.Stop()
			for range cap(cb.Sessions()) + 1 { // Stop closed it: the rest drains, then it stays closed
				take()
			}
			if strings.Join(read, ",") != strings.Join(tc.wantRead, ",") {
				t.Fatalf("delivered %v, want %v", read, tc.wantRead)
			}
		})
	}
}

// However many deliveries of one session race, one is delivered.
func TestSessionCallbackConcurrentRepeats(t *testing.T) {
	cb, _ := newTestCallback(t, SessionCallbackOptions{})
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if rec := post(cb, http.MethodPost, "Bearer "+testCallbackToken, sessionBody("gi-2")); rec.Code != http.StatusOK {
				t.Errorf("status %d", rec.Code)
			}
		})
	}
	wg.Wait()
	if n := len(cb.Sessions()); n != 1 {
		t.Fatalf("%d sessions delivered", n)
	}
}

func TestRecentIDs(t *testing.T) {
	r := newRecentIDs(3)
	for _, id := range []string{"a", "b", "c", "d"} {
		r.add(id)
	}
	if r.has("a") || !r.has("b") || !r.has("d") || len(r.set) != 3 {
		t.Fatalf("remembered %v", r.set)
	}
}
