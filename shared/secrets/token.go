// Package secrets turns a Secrets Manager secret into a bearer token, cached
// in memory so a warm Lambda does not pay a Secrets Manager round trip (and
// its price) on every allocation.
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

// ErrBadSecret means the secret exists but holds no usable token. Messages
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

// TokenSource hands out the current token from a Secrets Manager secret.
type TokenSource struct {
	client   SecretGetter
	secretID string
	ttl      time.Duration
	now      func() time.Time

	mu        sync.Mutex
	token     string
	fetchedAt time.Time
}

// NewTokenSource caches the token for ttl. now may be nil (time.Now).
func NewTokenSource(client SecretGetter, secretID string, ttl time.Duration, now func() time.Time) *TokenSource {
	if now == nil {
		now = time.Now
	}
	return &TokenSource{client: client, secretID: secretID, ttl: ttl, now: now}
}

// Token returns the cached token, fetching it when absent or older than the TTL.
func (s *TokenSource) Token(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" && s.now().Sub(s.fetchedAt) < s.ttl {
		return s.token, nil
	}
	return s.fetchLocked(ctx)
}

// Refresh re-reads the secret after the upstream rejected stale. When another
// caller already replaced stale, the newer token is returned without a fetch,
// so a burst of 401s costs one Secrets Manager call, not one each.
func (s *TokenSource) Refresh(ctx context.Context, stale string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" && s.token != stale {
		return s.token, nil
	}
	return s.fetchLocked(ctx)
}

func (s *TokenSource) fetchLocked(ctx context.Context) (string, error) {
	secret, err := secretString(ctx, s.client, s.secretID)
	if err != nil {
		return "", err
	}
	token, err := ParseToken(secret)
	if err != nil {
		return "", secretError(s.secretID, err)
	}
	s.token, s.fetchedAt = token, s.now()
	return token, nil
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
