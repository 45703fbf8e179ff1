//go:build integration

package tests

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/gamefabric-alloc/allocsvc/local/agonesemu"
	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/shared/agones"
	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/allocators"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
)

// agonesRegion is the region an env's Agones allocator serves
// (envOptions.agones); every other region is the GameFabric stub's.
const agonesRegion = "eu-baremetal"

// agonesOptions point agonesRegion at an Agones allocator stand-in.
type agonesOptions struct {
	allocator    *agonesemu.Allocator
	secret       string // the TLS secret's value in moto; default allocator.Secret()
	roomsCounter string
	secretARN    string // set by newEnv: the TLS secret in moto
}

// startAgones is a fresh allocator stand-in, with its own CA, closed
// with the test.
func startAgones(t *testing.T, cfg agonesemu.Config) *agonesemu.Allocator {
	t.Helper()
	a, err := agonesemu.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// agonesUpstreams are the env's Allocators as AllocateFunction builds them
// from its configuration: agonesRegion's Agones entry with its TLS secret
// in moto, the stub (with tokenSecret) as the default Allocator.
func agonesUpstreams(t *testing.T, o *agonesOptions, stub *gfemu.Installation, tokenSecret string, sm *secretsmanager.Client) allocation.Upstreams {
	t.Helper()
	if o.secret == "" {
		o.secret = o.allocator.Secret()
	}
	o.secretARN = newSecret(t, o.secret)
	entry := map[string]any{"kind": "agones", "url": o.allocator.URL, "tlsSecretId": o.secretARN}
	if o.roomsCounter != "" {
		entry["roomsCounter"] = o.roomsCounter
	}
	listed, _ := json.Marshal(map[string]any{agonesRegion: entry})
	vars := map[string]string{"GAMEFABRIC_URL": stub.URL, "GAMEFABRIC_ALLOCATE_PATH": stub.AllocatePath(), "ALLOCATOR_TOKEN_SECRET_ID": tokenSecret,
		"GAMEFABRIC_ALLOCATORS": string(listed), "BACKEND_ADDRESS": "http://127.0.0.1:10100", "GAME_INSTANCES_TABLE": "unused"}
	cfg, err := config.LoadAllocate(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	return allocators.New(cfg, &http.Client{}, sm)
}

// agonesLabels are the labels seed 000 puts on the request's ArmadaSet,
// the default matchLabels with the env's defaults.
var agonesLabels = map[string]string{"allocator.nitrado.net/env": "prag", "allocator.nitrado.net/armadaset": "sample-game-armada-set"}

// addAgonesServers adds n Ready GameServers for the env's requests, each
// with a rooms Counter of capacity rooms (none when 0), and a game port of
// its own from 7100.
func addAgonesServers(a *agonesemu.Allocator, n, rooms int) {
	for i := range n {
		gs := agonesemu.GameServer{Labels: agonesLabels, Ports: []agones.Port{{Name: "game", Port: agones.Int64(7100 + i)}}}
		if rooms > 0 {
			gs.Counters = map[string]agones.Count{"rooms": {Capacity: int64(rooms)}}
		}
		a.Add(gs)
	}
}

// secretKey is a TLS secret's "tls.key", "" when it has none.
func secretKey(secret string) string {
	var doc map[string]string
	_ = json.Unmarshal([]byte(secret), &doc)
	return doc["tls.key"]
}

// withKey is secret with its "tls.key" replaced by key.
func withKey(t *testing.T, secret, key string) string {
	t.Helper()
	var doc map[string]string
	if err := json.Unmarshal([]byte(secret), &doc); err != nil {
		t.Fatal(err)
	}
	doc["tls.key"] = key
	raw, _ := json.Marshal(doc)
	return string(raw)
}
