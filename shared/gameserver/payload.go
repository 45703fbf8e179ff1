package gameserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Payload is what the allocate call hands GameFabric for the game server,
// and GameFabric's allocation sidecar writes to the payload file
// (ALLOC_PAYLOAD_FILE, e.g. /app/shared/payload.json): Pragma's field
// names, exactly as the allocation service sends them.
//
// The tokens are credentials: String, GoString and LogValue leave them
// out, so printing or logging a Payload never leaks them. Its JSON is the
// file's, tokens included: keep it off logs.
type Payload struct {
	GameInstanceID     string `json:"GameInstanceId"`
	PartnerGameToken   string `json:"PartnerGameToken"`
	PartnerSocialToken string `json:"PartnerSocialToken,omitempty"`
	// BackendAddress is the base URL of the game-server routes.
	BackendAddress string `json:"pragmaBackendAddress"`
	// ServerArgs are the arguments the backend asked for, e.g. "-map=arena".
	ServerArgs string `json:"ServerArgs,omitempty"`
	// GameSession is a GameLift placement's game session, its fields
	// top-level as the service sends them (GameSessionName,
	// GameProperties, GameSessionData, MaximumPlayerSessionCount,
	// DesiredPlayerSessions); nil for any other allocation.
	*gameinstance.GameSession
}

// MaxPayloadSize bounds what ReadPayload reads: the allocate call's
// payload is a few hundred bytes; a larger file is not one.
const MaxPayloadSize = 64 << 10

// ErrInvalidPayload: the payload is complete JSON but not a usable
// allocation payload (a field missing or malformed). Waiting longer does
// not help.
var ErrInvalidPayload = errors.New("invalid allocation payload")

// ErrIncompletePayload: the file is not (yet) a whole JSON object, as
// while the sidecar is still writing it. WaitForPayload keeps polling.
var ErrIncompletePayload = errors.New("allocation payload incomplete")

func (p Payload) String() string {
	return fmt.Sprintf("game instance %s (backend %s)", p.GameInstanceID, p.BackendAddress)
}

// GoString keeps %#v from printing the tokens.
func (p Payload) GoString() string {
	return fmt.Sprintf("gameserver.Payload{GameInstanceID:%q, BackendAddress:%q, ServerArgs:%q, tokens redacted}",
		p.GameInstanceID, p.BackendAddress, p.ServerArgs)
}

// LogValue keeps the tokens out of slog output.
func (p Payload) LogValue() slog.Value {
	return slog.GroupValue(slog.String("gameInstanceId", p.GameInstanceID), slog.String("backendAddress", p.BackendAddress))
}

// Validate names every problem at once. It never quotes a token.
func (p Payload) Validate() error {
	var problems []string
	if msg := gameinstance.IDProblem(p.GameInstanceID); msg != "" {
		// The same rule as the routes' path; named as the payload names it.
		problems = append(problems, "GameInstanceId"+strings.TrimPrefix(msg, "gameInstanceId"))
	}
	switch {
	case p.PartnerGameToken == "":
		problems = append(problems, "PartnerGameToken is required")
	case len(p.PartnerGameToken) > 4096 || strings.IndexFunc(p.PartnerGameToken, notHeaderSafe) >= 0:
		// It travels as "Authorization: Bearer <token>".
		problems = append(problems, "PartnerGameToken must be at most 4096 printable characters without spaces")
	}
	if p.BackendAddress == "" {
		problems = append(problems, "pragmaBackendAddress is required")
	} else if u, err := url.Parse(p.BackendAddress); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		problems = append(problems, fmt.Sprintf("pragmaBackendAddress must be an http(s) URL, got %q", p.BackendAddress))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalidPayload, strings.Join(problems, "; "))
	}
	return nil
}

func notHeaderSafe(r rune) bool {
	return r > unicode.MaxASCII || unicode.IsSpace(r) || !unicode.IsPrint(r)
}

// ParsePayload decodes and validates a payload. Unknown fields are
// allowed: GameFabric may add its own.
func ParsePayload(raw []byte) (Payload, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > MaxPayloadSize {
		return Payload{}, fmt.Errorf("%w: larger than %d bytes", ErrInvalidPayload, MaxPayloadSize)
	}
	if !json.Valid(raw) {
		// A prefix of a JSON object is never valid JSON, so a file caught
		// mid-write lands here, not in a misleading field error.
		return Payload{}, ErrIncompletePayload
	}
	if raw[0] != '{' {
		return Payload{}, fmt.Errorf("%w: not a JSON object", ErrInvalidPayload)
	}
	var p Payload
	if err := json.Unmarshal(raw, &p); err != nil {
		// Only a field of the wrong type gets here; the message names the
		// field, never a value.
		return Payload{}, fmt.Errorf("%w: %v", ErrInvalidPayload, err)
	}
	return p, p.Validate()
}

// ReadPayload reads the payload file once. A missing file is an error
// wrapping fs.ErrNotExist; a file caught mid-write one wrapping
// ErrIncompletePayload.
func ReadPayload(path string) (Payload, error) {
	f, err := os.Open(path)
	if err != nil {
		return Payload{}, fmt.Errorf("payload file: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, MaxPayloadSize+1))
	if err != nil {
		return Payload{}, fmt.Errorf("payload file %s: %w", path, err)
	}
	p, err := ParsePayload(raw)
	if err != nil {
		return Payload{}, fmt.Errorf("payload file %s: %w", path, err)
	}
	return p, nil
}

// DefaultPayloadPoll is how often WaitForPayload looks when poll is 0.
const DefaultPayloadPoll = 200 * time.Millisecond

// WaitForPayload polls path until it holds a whole, valid payload. A
// missing or half-written file is waited for (the sidecar writes it when
// the server is allocated, and need not write it atomically); an invalid
// one, or one that cannot be read, fails at once. When ctx ends first,
// the error wraps ctx's and says what the file looked like last.
//
// Polling, rather than file notifications, works on every volume the
// sidecar and the server may share.
func WaitForPayload(ctx context.Context, path string, poll time.Duration) (Payload, error) {
	if poll <= 0 {
		poll = DefaultPayloadPoll
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		p, err := ReadPayload(path)
		if err == nil || !(errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrIncompletePayload)) {
			return p, err
		}
		select {
		case <-ctx.Done():
			return Payload{}, fmt.Errorf("waiting for the allocation payload (last: %v): %w", err, ctx.Err())
		case <-t.C:
		}
	}
}
