//go:build integration

package tests

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func regionStatuses(attempts []map[string]any) []string {
	var out []string
	for _, a := range attempts {
		out = append(out, fmt.Sprint(a["region"], ":", a["status"]))
	}
	return out
}

func serverAddress(r response) string {
	s, _ := r.Body["server"].(map[string]any)
	addr, _ := s["address"].(string)
	return addr
}

// plainItem decodes a stored item into plain Go values, and renders it as
// JSON so it can be searched for leaked credentials wherever they nest.
func plainItem(t *testing.T, item map[string]types.AttributeValue) (map[string]any, string) {
	t.Helper()
	var plain map[string]any
	if err := attributevalue.UnmarshalMap(item, &plain); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(plain)
	if err != nil {
		t.Fatal(err)
	}
	return plain, string(b)
}

// closedPort returns a loopback address nothing listens on: connecting to
// it is refused at once.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// serveOn brings "GameFabric" up at addr, the address that refused before.
func serveOn(t *testing.T, addr string, h http.Handler) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("reopen %s (taken by another process meanwhile?): %v", addr, err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}
