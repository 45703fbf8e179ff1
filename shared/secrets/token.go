// Package secrets turns a Secrets Manager secret into a credential (a
// bearer token, or what another package parses, such as an Agones client
// certificate), cached in memory so a warm Lambda does not pay a Secrets
// Manager round trip (and its price) on every allocation.
package secrets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/smithy-go"
)

// ErrBadSecret means the secret exists but holds nothing usable. Messages
// wrapping it never include the secret's content.
var ErrBadSecret = errors.New("secret holds no usable token")

// Error is a failed secret read. Permanent is true when waiting cannot
// help: the secret is missing, unreadable to us, or holds no token. Callers
// tell a deployment problem from a Secrets Manager outage by it.
type Error struct {
	SecretID string
	Err      error
	perm     bool
}

func (e *Error) Error() string   { return fmt.Sprintf("read secret %s: %v", e.SecretID, e.Err) }
func (e *Error) Unwrap() error   { return e.Err }
func (e *Error) Permanent() bool { return e.perm }

// permanentCodes are Secrets Manager errors no retry cures.
var permanentCodes = map[string]bool{
	"ResourceNotFoundException": true, // no such secret (or no current version)
	"AccessDeniedException":     true, // IAM policy or KMS key policy
	"DecryptionFailure":         true,
	"InvalidRequestException":   true, // e.g. the secret is scheduled for deletion
}

func permanentSecretError(err error) bool {
	if errors.Is(err, ErrBadSecret) {
		return true
	}
	var api smithy.APIError
	return errors.As(err, &api) && permanentCodes[api.ErrorCode()]
}

// SecretGetter is the part of the Secrets Manager client this package uses.
type SecretGetter interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, opts ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

var _ SecretGetter = (*secretsmanager.Client)(nil)

// ParseToken reads the three accepted secret formats: the raw token,
// {"allocatorToken": "..."}, or {"tokens": ["old", "new"]} where the last
// token is current (GameFabric's rotation rule).
func ParseToken(secret string) (string, error) {
	s := strings.TrimSpace(secret)
	if s == "" {
		return "", fmt.Errorf("%w: the secret string is empty", ErrBadSecret)
	}
	if !strings.HasPrefix(s, "{") {
		return s, nil
	}
	var doc struct {
		AllocatorToken *string  `json:"allocatorToken"`
		Tokens         []string `json:"tokens"`
	}
	if err := json.Unmarshal([]byte(s), &doc); err != nil {
		// Deliberately not wrapping err: its text can quote the secret.
		return "", fmt.Errorf("%w: the secret looks like JSON but does not parse", ErrBadSecret)
	}
	switch {
	case doc.AllocatorToken != nil:
		if t := strings.TrimSpace(*doc.AllocatorToken); t != "" {
			return t, nil
		}
		return "", fmt.Errorf("%w: allocatorToken is empty", ErrBadSecret)
	case doc.Tokens != nil:
		if len(doc.Tokens) == 0 {
			return "", fmt.Errorf("%w: tokens is an empty list", ErrBadSecret)
		}
		if t := strings.TrimSpace(doc.Tokens[len(doc.Tokens)-1]); t != "" {
			return t, nil
		}
		return "", fmt.Errorf("%w: the last entry of tokens is empty", ErrBadSecret)
	default:
		return "", fmt.Errorf("%w: JSON secrets need an allocatorToken string or a tokens list", ErrBadSecret)
	}
}

// Source hands out a value parsed from a Secrets Manager secret, cached
// for its TTL so a warm Lambda does not pay a Secrets Manager round trip
// on every call. T is compared to tell a stale value from a fresh one.
type Source[T comparable] struct {
	client   SecretGetter
	secretID string
	ttl      time.Duration
	now      func() time.Time
	parse    func(string) (T, error)

	mu        sync.Mutex
	value     T
	has       bool
	fetchedAt time.Time
}

// NewSource caches what parse makes of the secret for ttl. now may be nil
// (time.Now). parse's errors must not quote the secret; wrap ErrBadSecret
// for a secret that no retry makes usable.
func NewSource[T comparable](client SecretGetter, secretID string, ttl time.Duration, now func() time.Time, parse func(string) (T, error)) *Source[T] {
	if now == nil {
		now = time.Now
	}
	return &Source[T]{client: client, secretID: secretID, ttl: ttl, now: now, parse: parse}
}

// Get returns the cached value, fetching it when absent or older than the TTL.
func (s *Source[T]) Get(ctx context.Context) (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.has && s.now().Sub(s.fetchedAt) < s.ttl {
		return s.value, nil
	}
	return s.fetchLocked(ctx)
}

// Refresh re-reads the secret after the upstream rejected stale. When another
// caller already replaced stale, the newer value is returned without a fetch,
// so a burst of rejections costs one Secrets Manager call, not one each.
func (s *Source[T]) Refresh(ctx context.Context, stale T) (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.has && s.value != stale {
		return s.value, nil
	}
	return s.fetchLocked(ctx)
}

// Expire drops stale from the cache, if it is still what the cache holds,
// so that the next Get reads the secret again (after the upstream refused
// it, without a retry now that would pay for the read).
func (s *Source[T]) Expire(stale T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.has && s.value == stale {
		s.has = false
	}
}

func (s *Source[T]) fetchLocked(ctx context.Context) (T, error) {
	var zero T
	secret, err := secretString(ctx, s.client, s.secretID)
	if err != nil {
		return zero, err
	}
	v, err := s.parse(secret)
	if err != nil {
		return zero, secretError(s.secretID, err)
	}
	s.value, s.has, s.fetchedAt = v, true, s.now()
	return v, nil
}

// secretString reads secretID's SecretString; a failure is an *Error.
func secretString(ctx context.Context, client SecretGetter, secretID string) (string, error) {
	out, err := client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(secretID)})
	if err != nil {
		return "", secretError(secretID, err)
	}
	if out.SecretString == nil {
		return "", secretError(secretID, fmt.Errorf("%w: it has no SecretString", ErrBadSecret))
	}
	return *out.SecretString, nil
}

func secretError(secretID string, err error) *Error {
	return &Error{SecretID: secretID, Err: err, perm: permanentSecretError(err)}
}

// TokenSource hands out the current bearer token of a secret (ParseToken).
type TokenSource struct{ *Source[string] }

// NewTokenSource caches the token for ttl. now may be nil (time.Now).
func NewTokenSource(client SecretGetter, secretID string, ttl time.Duration, now func() time.Time) *TokenSource {
	return &TokenSource{NewSource(client, secretID, ttl, now, ParseToken)}
}

// Token returns the cached token, fetching it when absent or older than the TTL.
func (s *TokenSource) Token(ctx context.Context) (string, error) { return s.Get(ctx) }
