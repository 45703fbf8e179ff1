package gfproto

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestBearerTokenAndTokens(t *testing.T) {
	ts := NewTokens("", "old", "new")
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
		token, ok := BearerToken(r)
		if token != tc.token || ok != tc.ok {
			t.Errorf("BearerToken(%q) = %q, %v; want %q, %v", tc.header, token, ok, tc.token, tc.ok)
		}
		if got := ok && ts.Accepts(token); got != tc.valid {
			t.Errorf("%q accepted = %v, want %v", tc.header, got, tc.valid)
		}
	}
	if ts.Accepts("") || NewTokens().Accepts("new") {
		t.Fatal("an empty token or an empty list authenticated")
	}
}

func TestErrorJSONIsWhatWriteErrorSends(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteError(rec, http.StatusNotFound, `no <server> "here"`)
	if got, want := rec.Body.String(), string(ErrorJSON(`no <server> "here"`)); got != want {
		t.Fatalf("WriteError sent %q, ErrorJSON is %q", got, want)
	}
	if rec.Code != http.StatusNotFound || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("WriteError = %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
}
