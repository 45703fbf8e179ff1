package secrets

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseKeys(t *testing.T) {
	for _, bad := range []string{``, `hunter2`, `{}`, `["a"]`, `{"AKID1": ""}`, `{"AK ID": "hunter2"}`, `{"AKID1": 5}`} {
		if _, err := ParseKeys(bad); !errors.Is(err, ErrBadSecret) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("ParseKeys(%q) = %v, want ErrBadSecret without the secret", bad, err)
		}
	}
	if keys, err := ParseKeys(`{"AKID1": "s1", "AKID2": "s2"}`); err != nil || keys["AKID2"] != "s2" {
		t.Fatalf("ParseKeys = %v, %v", keys, err)
	}
}

// A known key is served from the cache; an unknown one re-reads the
// secret at most once per refresh period; a failed read keeps the keys
// read before.
func TestKeysCacheAndRefresh(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	sm := &fakeSecrets{values: []string{`{"AKID1": "s1"}`, `{"AKID1": "s1", "AKID2": "s2"}`}}
	k := NewKeys(sm, "keys", time.Minute, 5*time.Second, func() time.Time { return now })
	ctx := context.Background()
	secret := func(id string) (string, bool) {
		t.Helper()
		s, ok, err := k.Secret(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return s, ok
	}
	if s, ok := secret("AKID1"); !ok || s != "s1" || sm.calls != 1 {
		t.Fatalf("first read: %q %v, %d calls", s, ok, sm.calls)
	}
	if _, ok := secret("AKID2"); ok || sm.calls != 1 {
		t.Fatalf("an unknown key within the refresh period read the secret again (%d calls)", sm.calls)
	}
	now = now.Add(5 * time.Second)
	if s, ok := secret("AKID2"); !ok || s != "s2" || sm.calls != 2 {
		t.Fatalf("a key added to the secret: %q %v, %d calls", s, ok, sm.calls)
	}
	for range 3 {
		secret("AKID9")
	}
	if sm.calls != 2 {
		t.Fatalf("made-up keys read the secret %d times within a period", sm.calls-2)
	}
	now = now.Add(2 * time.Minute)
	sm.err = errors.New("secrets manager is down")
	if s, ok := secret("AKID1"); !ok || s != "s1" {
		t.Fatalf("a failed refresh dropped the keys read before: %q %v", s, ok)
	}
	fresh := NewKeys(sm, "keys", time.Minute, 5*time.Second, func() time.Time { return now })
	if _, _, err := fresh.Secret(ctx, "AKID1"); err == nil {
		t.Fatal("no keys and no secret: want an error")
	}
}
