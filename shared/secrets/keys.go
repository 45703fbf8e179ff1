package secrets

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// ParseKeys reads an access-key secret: a JSON object of access key id to
// secret access key, {"<access key id>": "<secret key>", ...}, several at
// once so keys can be rotated. Its errors never quote the secret.
func ParseKeys(secret string) (map[string]string, error) {
	var keys map[string]string
	if err := json.Unmarshal([]byte(secret), &keys); err != nil || len(keys) == 0 {
		return nil, fmt.Errorf(`%w: expected a JSON object of access key ids to secret keys, {"<access key id>": "<secret key>"}`, ErrBadSecret)
	}
	for id, key := range keys {
		if !accessKeyID(id) || key == "" {
			return nil, fmt.Errorf("%w: each access key id must be 1-128 letters and digits, with a non-empty secret key", ErrBadSecret)
		}
	}
	return keys, nil
}

func accessKeyID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// Keys hands out secret access keys from a Secrets Manager secret
// (ParseKeys), cached for ttl. An access key id the cache lacks re-reads
// the secret, at most once every refreshEvery, so a key just added works
// at once while made-up ids cost one read per period, not one each; a
// read that fails keeps the keys read before.
type Keys struct {
	client       SecretGetter
	secretID     string
	ttl          time.Duration
	refreshEvery time.Duration
	now          func() time.Time

	mu        sync.Mutex
	keys      map[string]string
	fetchedAt time.Time // the last read that succeeded
	triedAt   time.Time // the last read
}

// NewKeys reads secretID through client; now may be nil (time.Now).
func NewKeys(client SecretGetter, secretID string, ttl, refreshEvery time.Duration, now func() time.Time) *Keys {
	if now == nil {
		now = time.Now
	}
	return &Keys{client: client, secretID: secretID, ttl: ttl, refreshEvery: refreshEvery, now: now}
}

// Secret returns the secret key of access key id; found is false when the
// secret does not hold id. An error (*Error) means the secret could not be
// read and no keys were read before.
func (k *Keys) Secret(ctx context.Context, id string) (secret string, found bool, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.now()
	secret, found = k.keys[id]
	fresh := k.keys != nil && now.Sub(k.fetchedAt) < k.ttl
	mayRead := k.triedAt.IsZero() || now.Sub(k.triedAt) >= k.refreshEvery
	if (fresh && found) || !mayRead {
		return secret, found, nil
	}
	k.triedAt = now
	keys, err := k.read(ctx)
	if err != nil {
		if k.keys != nil {
			return secret, found, nil
		}
		return "", false, err
	}
	k.keys, k.fetchedAt = keys, now
	secret, found = keys[id]
	return secret, found, nil
}

func (k *Keys) read(ctx context.Context) (map[string]string, error) {
	secret, err := secretString(ctx, k.client, k.secretID)
	if err != nil {
		return nil, err
	}
	keys, err := ParseKeys(secret)
	if err != nil {
		return nil, secretError(k.secretID, err)
	}
	return keys, nil
}
