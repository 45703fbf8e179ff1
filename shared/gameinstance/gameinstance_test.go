package gameinstance

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestIDProblem(t *testing.T) {
	tests := []struct{ id, want string }{
		{"gi-1", ""}, {"a.b_c:d-e", ""}, {strings.Repeat("x", MaxIDLength), ""},
		{"", "is required"}, {strings.Repeat("x", MaxIDLength+1), "at most 128"}, {"gi 1", "may only contain"}, {"gi/1", "may only contain"},
	}
	for _, tc := range tests {
		got := IDProblem(tc.id)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("IDProblem(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
	var e *Error
	if err := ValidateID("gi/1"); !errors.As(err, &e) || e.Code != CodeInvalidRequest || CodeOf(err) != CodeInvalidRequest {
		t.Errorf("ValidateID = %v, want INVALID_REQUEST", err)
	}
	if CodeOf(errors.New("x")) != CodeInternal {
		t.Error("an unclassified error is not INTERNAL")
	}
}

func TestSecondsUntil(t *testing.T) {
	now := time.Unix(1000, 0)
	tests := []struct {
		in   time.Duration
		want time.Duration
	}{{-time.Second, time.Second}, {0, time.Second}, {1500 * time.Millisecond, 2 * time.Second}, {3 * time.Second, 3 * time.Second}}
	for _, tc := range tests {
		if got := SecondsUntil(now.Add(tc.in), now); got != tc.want {
			t.Errorf("SecondsUntil(+%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestHashToken(t *testing.T) {
	// base64url SHA-256 of "token": stored hashes must stay comparable.
	if got := HashToken("token"); got != "PEaenWxYddN6Q_NT1PiOYfz4EsZu7jRXRlpAsNpBU-A" || HashToken("other") == got {
		t.Errorf("HashToken = %q", got)
	}
}
