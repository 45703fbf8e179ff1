package gfemu

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestBearerTokenAndTokens(t *testing.T) {
	ts := newTokens("", "old", "new")
	tests := []struct {
		header    string
		token     string
		ok, valid bool
	}{
		{"Bearer new", "new", true, true},
		{"bearer old", "old", true, true},
		{"  Bearer   new  ", "new", true, true},
		{"Bearer gone", "gone", true, false},
		{"Bearer ", "", false, false},
		{"Basic new", "new", false, false},
		{"new", "", false, false},
		{"", "", false, false},
	}
	for _, tc := range tests {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Authorization", tc.header)
		token, ok := bearerToken(r)
		if token != tc.token || ok != tc.ok {
			t.Errorf("bearerToken(%q) = %q, %v; want %q, %v", tc.header, token, ok, tc.token, tc.ok)
		}
		if got := ok && ts.accepts(token); got != tc.valid {
			t.Errorf("%q accepted = %v, want %v", tc.header, got, tc.valid)
		}
	}
	if ts.accepts("") || newTokens().accepts("new") {
		t.Fatal("an empty token or an empty list authenticated")
	}
}

func TestErrorJSONIsWhatWriteErrorSends(t *testing.T) {
	rec := httptest.NewRecorder()
	writeError(rec, http.StatusNotFound, `no <server> "here"`)
	if got, want := rec.Body.String(), string(errorJSON(`no <server> "here"`)); got != want {
		t.Fatalf("writeError sent %q, errorJSON is %q", got, want)
	}
	if rec.Code != http.StatusNotFound || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("writeError = %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
}
