package httpapi

import (
	"bytes"
	"net"
	"strings"
	"testing"
)

// The link-back credential and body parsers see untrusted input from game
// servers: they must never panic, and never accept a token with spaces.
func FuzzBearerToken(f *testing.F) {
	for _, seed := range []string{"Bearer abc", "bearer  abc ", "Bearer", "Basic abc", "", "Bearer a b", "Bearer\tabc"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		token, err := BearerToken(header)
		if err == nil && (token == "" || strings.TrimSpace(token) != token || len(token) > 4096) {
			t.Fatalf("BearerToken(%q) accepted %q", header, token)
		}
	})
}

func FuzzLinkBody(f *testing.F) {
	for _, seed := range []string{`{"address":"1.2.3.4:7777","ports":{"game":7777},"serverName":"s"}`, ``, `[]`, `{"ports":{"":0}}`, `{"x":1}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var body linkBody
		if DecodeOptionalBody(bytes.NewReader(raw), &body) != nil {
			return
		}
		info, err := body.info()
		if err != nil || info == nil {
			return
		}
		for name, port := range info.Ports {
			if name == "" || port < 1 || port > 65535 {
				t.Fatalf("accepted port %q=%d", name, port)
			}
		}
		if info.Address != "" {
			if host, _, err := net.SplitHostPort(info.Address); err != nil || host == "" {
				t.Fatalf("accepted address %q", info.Address)
			}
		}
	})
}
