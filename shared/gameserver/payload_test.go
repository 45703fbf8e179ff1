package gameserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
)

const validPayload = `{"GameInstanceId":"gi-7","PartnerGameToken":"` + testToken + `","PartnerSocialToken":"pst-secret-e0a1",
 "pragmaBackendAddress":"https://api.example.com/prod","ServerArgs":"-map=arena","SomethingGameFabricAdds":{"x":1}}`

func TestParsePayload(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		wantErr error  // nil: valid
		wantMsg string // part of the error
	}{
		{"valid, unknown fields kept out", validPayload, nil, ""},
		{"surrounded by whitespace", "\n " + validPayload + "\n", nil, ""},
		{"empty file", "", ErrIncompletePayload, ""},
		{"half written", validPayload[:40], ErrIncompletePayload, ""},
		{"all but the brace", validPayload[:len(validPayload)-1], ErrIncompletePayload, ""},
		{"not an object", `["GameInstanceId"]`, ErrInvalidPayload, "not a JSON object"},
		{"wrong type", `{"GameInstanceId":7,"PartnerGameToken":"t","pragmaBackendAddress":"http://x"}`, ErrInvalidPayload, "GameInstanceId"},
		{"everything missing", `{}`, ErrInvalidPayload, "GameInstanceId is required; PartnerGameToken is required; pragmaBackendAddress is required"},
		{"bad id", `{"GameInstanceId":"a b","PartnerGameToken":"t","pragmaBackendAddress":"http://x"}`, ErrInvalidPayload, "GameInstanceId may only contain"},
		{"token with a space", `{"GameInstanceId":"g","PartnerGameToken":"a b","pragmaBackendAddress":"http://x"}`, ErrInvalidPayload, "PartnerGameToken must be"},
		{"backend not a URL", `{"GameInstanceId":"g","PartnerGameToken":"t","pragmaBackendAddress":"localhost:10100"}`, ErrInvalidPayload, `pragmaBackendAddress must be an http(s) URL, got "localhost:10100"`},
		{"backend with a query", `{"GameInstanceId":"g","PartnerGameToken":"t","pragmaBackendAddress":"http://x/?a=b"}`, ErrInvalidPayload, "pragmaBackendAddress"},
		{"too large", `{"GameInstanceId":"g","pad":"` + strings.Repeat("x", MaxPayloadSize) + `"}`, ErrInvalidPayload, "larger than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePayload([]byte(tc.raw))
			if tc.wantErr == nil {
				want := Payload{GameInstanceID: "gi-7", PartnerGameToken: testToken, PartnerSocialToken: "pst-secret-e0a1",
					BackendAddress: "https://api.example.com/prod", ServerArgs: "-map=arena"}
				if err != nil || p != want {
					t.Fatalf("got %#v, %v", p, err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) || !strings.Contains(fmt.Sprint(err), tc.wantMsg) {
				t.Fatalf("error %v, want %v containing %q", err, tc.wantErr, tc.wantMsg)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Fatal("the error quotes the token")
			}
		})
	}
}

// The SDK reads exactly what the allocate call sends GameFabric.
func TestPayloadMatchesWhatAllocateSends(t *testing.T) {
	sent := allocation.Payload{GameInstanceID: "gi-9", PartnerGameToken: testToken, PartnerSocialToken: "social",
		PragmaBackendAddress: "https://abc.execute-api.eu-west-1.amazonaws.com", ServerArgs: "-map=arena -mode=ctf"}
	raw, err := json.Marshal(sent)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParsePayload(raw)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Payload{GameInstanceID: sent.GameInstanceID, PartnerGameToken: sent.PartnerGameToken, PartnerSocialToken: sent.PartnerSocialToken,
		BackendAddress: sent.PragmaBackendAddress, ServerArgs: sent.ServerArgs}); got != want {
		t.Fatalf("read %#v from %s", got, raw)
	}
}

func TestPayloadNeverPrintsTokens(t *testing.T) {
	p, err := ParsePayload([]byte(validPayload))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		fmt.Fprintf(&out, format+"\n", p)
	}
	slog.New(slog.NewJSONHandler(&out, nil)).Info("allocated", "payload", p)
	slog.New(slog.NewTextHandler(&out, nil)).Info("allocated", "payload", p)
	if s := out.String(); strings.Contains(s, testToken) || strings.Contains(s, "pst-secret") || !strings.Contains(s, "gi-7") {
		t.Fatalf("printed:\n%s", s)
	}
}

func TestReadPayload(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadPayload(filepath.Join(dir, "absent.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("absent file: %v", err)
	}
	path := filepath.Join(dir, "payload.json")
	writeFile(t, path, validPayload)
	if p, err := ReadPayload(path); err != nil || p.GameInstanceID != "gi-7" {
		t.Fatalf("got %v, %v", p, err)
	}
	// More than the bound is never read whole.
	writeFile(t, path, `{"pad":"`+strings.Repeat("x", 10*MaxPayloadSize)+`"}`)
	if _, err := ReadPayload(path); !errors.Is(err, ErrInvalidPayload) {
		t.Fatalf("huge file: %v", err)
	}
}

func TestWaitForPayload(t *testing.T) {
	tests := []struct {
		name string
		// write acts on the file while WaitForPayload waits; nil: never.
		write   func(t *testing.T, path string)
		timeout time.Duration
		wantErr error  // nil: the payload
		wantMsg string // part of the error
	}{
		{"appears later", func(t *testing.T, path string) {
			time.Sleep(50 * time.Millisecond)
			writeFile(t, path, validPayload)
		}, 5 * time.Second, nil, ""},
		{"written in two steps, not atomically", func(t *testing.T, path string) {
			writeFile(t, path, validPayload[:30])
			time.Sleep(60 * time.Millisecond)
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = f.WriteString(validPayload[30:])
			f.Close()
		}, 5 * time.Second, nil, ""},
		{"never written", nil, 60 * time.Millisecond, context.DeadlineExceeded, "no such file"},
		{"stays half written", func(t *testing.T, path string) { writeFile(t, path, validPayload[:30]) },
			100 * time.Millisecond, context.DeadlineExceeded, "incomplete"},
		{"invalid fails at once", func(t *testing.T, path string) {
			writeFile(t, path, `{"GameInstanceId":"gi-7"}`)
		}, 5 * time.Second, ErrInvalidPayload, "PartnerGameToken is required"},
		{"a directory fails at once", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Error(err)
			}
		}, 5 * time.Second, nil, "is a directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "payload.json")
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			done := make(chan struct{})
			go func() {
				defer close(done)
				if tc.write != nil {
					tc.write(t, path)
				}
			}()
			start := time.Now()
			p, err := WaitForPayload(ctx, path, 10*time.Millisecond)
			<-done
			switch {
			case tc.wantMsg == "":
				if err != nil || p.GameInstanceID != "gi-7" || p.ServerArgs != "-map=arena" {
					t.Fatalf("got %v, %v", p, err)
				}
			case (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) || err == nil || !strings.Contains(err.Error(), tc.wantMsg):
				t.Fatalf("error %v, want %v containing %q", err, tc.wantErr, tc.wantMsg)
			case !errors.Is(err, context.DeadlineExceeded) && time.Since(start) > time.Second:
				t.Fatalf("a final error took %s", time.Since(start))
			}
		})
	}
}

// A GameLift placement's payload carries its game session, top-level; any
// other payload has none.
func TestParsePayloadOfAGameLiftPlacement(t *testing.T) {
	raw := `{"GameInstanceId":"pl-1","PartnerGameToken":"t","pragmaBackendAddress":"http://x","GameSessionName":"duel",
		"GameProperties":[{"Key":"mode","Value":"ctf"}],"MaximumPlayerSessionCount":4,"DesiredPlayerSessions":[{"PlayerId":"p1","PlayerData":"red"}]}`
	p, err := ParsePayload([]byte(raw))
	if err != nil || p.GameSession == nil || p.Name != "duel" || len(p.Properties) != 1 || *p.MaximumPlayerSessionCount != 4 ||
		p.DesiredPlayerSessions[0].PlayerData != "red" {
		t.Fatalf("got %+v, %v", p.GameSession, err)
	}
	if p, err := ParsePayload([]byte(validPayload)); err != nil || p.GameSession != nil {
		t.Fatalf("a plain payload's game session: %+v, %v", p.GameSession, err)
	}
}
