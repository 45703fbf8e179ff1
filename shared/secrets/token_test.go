package secrets

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/smithy-go"
)

func TestParseToken(t *testing.T) {
	tests := []struct {
		name, secret, want string
		wantErr            bool
	}{
		{name: "raw", secret: "abc123", want: "abc123"},
		{name: "raw trimmed", secret: "  abc123\n", want: "abc123"},
		{name: "allocatorToken", secret: `{"allocatorToken":"tok"}`, want: "tok"},
		{name: "rotation uses last", secret: `{"tokens":["old","new"]}`, want: "new"},
		{name: "single rotation entry", secret: `{"tokens":["only"]}`, want: "only"},
		{name: "empty", secret: "  ", wantErr: true},
		{name: "empty allocatorToken", secret: `{"allocatorToken":""}`, wantErr: true},
		{name: "empty tokens", secret: `{"tokens":[]}`, wantErr: true},
		{name: "blank last token", secret: `{"tokens":["a",""]}`, wantErr: true},
		{name: "json without known key", secret: `{"password":"hunter2"}`, wantErr: true},
		{name: "broken json", secret: `{"allocatorToken":"hunter2"`, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseToken(tc.secret)
			if tc.wantErr {
				if !errors.Is(err, ErrBadSecret) {
					t.Fatalf("err = %v, want ErrBadSecret", err)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("error leaks the secret: %v", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseToken = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

type fakeSecrets struct {
	values []string
	calls  int
	err    error
}

func (f *fakeSecrets) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	v := f.values[min(f.calls-1, len(f.values)-1)]
	return &secretsmanager.GetSecretValueOutput{SecretString: aws.String(v)}, nil
}

func TestTokenSourceCachesAndRefreshes(t *testing.T) {
	now := time.Unix(1000, 0)
	fake := &fakeSecrets{values: []string{"one", "two", "three"}}
	src := NewTokenSource(fake, "sid", time.Minute, func() time.Time { return now })
	ctx := context.Background()

	mustToken := func(got string, err error, want string, calls int) {
		t.Helper()
		if err != nil || got != want || fake.calls != calls {
			t.Fatalf("got %q, %v after %d calls; want %q after %d", got, err, fake.calls, want, calls)
		}
	}
	tok, err := src.Token(ctx)
	mustToken(tok, err, "one", 1)
	tok, err = src.Token(ctx)
	mustToken(tok, err, "one", 1) // cached

	tok, err = src.Refresh(ctx, "one")
	mustToken(tok, err, "two", 2)
	tok, err = src.Refresh(ctx, "one") // someone else already refreshed
	mustToken(tok, err, "two", 2)

	now = now.Add(time.Minute)
	tok, err = src.Token(ctx)
	mustToken(tok, err, "three", 3) // TTL elapsed
}

func TestTokenSourceErrorsNameTheSecret(t *testing.T) {
	src := NewTokenSource(&fakeSecrets{err: errors.New("boom")}, "my-secret", time.Minute, nil)
	_, err := src.Token(context.Background())
	if err == nil || !strings.Contains(err.Error(), "my-secret") {
		t.Fatalf("err = %v, want it to name the secret", err)
	}
}

// Callers answer a deployment problem differently from an outage.
func TestTokenSourceTellsPermanentFromTransient(t *testing.T) {
	tests := []struct {
		name      string
		fake      *fakeSecrets
		permanent bool
	}{
		{"missing secret", &fakeSecrets{err: &types.ResourceNotFoundException{Message: aws.String("no such secret")}}, true},
		{"access denied", &fakeSecrets{err: &smithy.GenericAPIError{Code: "AccessDeniedException"}}, true},
		{"no token in it", &fakeSecrets{values: []string{`{"password":"x"}`}}, true},
		{"throttled", &fakeSecrets{err: &smithy.GenericAPIError{Code: "ThrottlingException"}}, false},
		{"unreachable", &fakeSecrets{err: errors.New("dial tcp 127.0.0.1:1: connect: connection refused")}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewTokenSource(tc.fake, "sid", time.Minute, nil).Token(context.Background())
			var se *Error
			if !errors.As(err, &se) || se.Permanent() != tc.permanent {
				t.Fatalf("err = %#v, want *Error with Permanent() = %v", err, tc.permanent)
			}
		})
	}
}

// Expire drops only the value it names: a value a refresh already
// replaced stays, and the next Get after a real expiry reads the secret.
func TestSourceExpire(t *testing.T) {
	fake := &fakeSecrets{values: []string{"one", "two"}}
	src := NewTokenSource(fake, "sid", time.Hour, nil)
	ctx := context.Background()
	if tok, _ := src.Token(ctx); tok != "one" {
		t.Fatal(tok)
	}
	src.Expire("stale-other")
	if tok, _ := src.Token(ctx); tok != "one" || fake.calls != 1 {
		t.Fatalf("a value that is not cached expired %q (%d calls)", tok, fake.calls)
	}
	src.Expire("one")
	if tok, _ := src.Token(ctx); tok != "two" || fake.calls != 2 {
		t.Fatalf("after Expire: %q (%d calls), want a fresh read", tok, fake.calls)
	}
}
