package gameinstance

import (
	"errors"
	"fmt"
	"net/http"
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

// The rows the three former parsers (gamefabric, allocclient, gameserver)
// each held, in one table.
func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 4, 31, 17, 0, time.UTC)
	tests := map[string]time.Duration{
		"": 0, "3": 3 * time.Second, "5": 5 * time.Second, " 7 ": 7 * time.Second,
		"0": 0, "-1": 0, "soon": 0,
		"99999999999":    24 * time.Hour, // capped: no Duration overflow
		"99999999999999": 24 * time.Hour,
		now.Add(5 * time.Second).Format(http.TimeFormat):  5 * time.Second,
		now.Add(10 * time.Second).Format(http.TimeFormat): 10 * time.Second,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Minute).Format(http.TimeFormat):     0,
	}
	for in, want := range tests {
		if got := ParseRetryAfter(in, now); got != want {
			t.Errorf("ParseRetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}

func BenchmarkParseRetryAfter(b *testing.B) {
	now := time.Date(2026, 11, 22, 4, 31, 17, 0, time.UTC)
	for _, v := range []string{"1", now.Add(2 * time.Second).Format(http.TimeFormat), ""} {
		b.Run(fmt.Sprintf("%q", v), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ParseRetryAfter(v, now)
			}
		})
	}
}
