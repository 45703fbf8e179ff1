//go:build integration

package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/shared/app/allocateapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// twoAllocators is a deployment with two GameFabric installations' worth
// of Allocators, wired as functions/allocate/main.go wires them (config,
// then allocateapp.Routes over moto's Secrets Manager):
//
//	us (the default, GAMEFABRIC_URL): us-west as "prod-us-west"
//	eu (GAMEFABRIC_ALLOCATORS):       eu-central-1 as "prod-eu-central", eu-west as "prod-eu-west"
//
// each with its own URL, tokens and token secret.
type twoAllocators struct {
	*env
	us, eu             *gfemu.Installation
	usSecret, euSecret string
}

type twoAllocatorsOptions struct {
	euSecretID string // default: a secret holding eu's tokens
}

func newTwoAllocators(t *testing.T, o twoAllocatorsOptions) *twoAllocators {
	t.Helper()
	d := &twoAllocators{env: &env{table: newTable(t)},
		us: gfemu.Start("us-current"), eu: gfemu.Start("eu-current"),
		usSecret: newSecret(t, `{"tokens":["us-old","us-current"]}`), euSecret: newSecret(t, `{"tokens":["eu-old","eu-current"]}`)}
	t.Cleanup(d.us.Close)
	t.Cleanup(d.eu.Close)
	// Every region has servers unless a test says otherwise.
	d.us.Always("prod-us-west", gfemu.Answer{})
	d.eu.Always("prod-eu-central", gfemu.Answer{})
	d.eu.Always("prod-eu-west", gfemu.Answer{})
	if o.euSecretID == "" {
		o.euSecretID = d.euSecret
	}
	euURL := d.eu.AllocateURL()
	listed, _ := json.Marshal(map[string]config.Allocator{
		"us-west":      {URL: d.us.AllocateURL(), Region: "prod-us-west"},
		"EU-Central-1": {URL: euURL, Region: "prod-eu-central", TokenSecretID: o.euSecretID},
		"eu-west":      {URL: euURL, Region: "prod-eu-west", TokenSecretID: o.euSecretID},
	})
	vars := map[string]string{
		"GAMEFABRIC_URL": d.us.URL, "GAMEFABRIC_ALLOCATE_PATH": d.us.AllocatePath(),
		"ALLOCATOR_TOKEN_SECRET_ID": d.usSecret, "GAMEFABRIC_ALLOCATORS": string(listed),
		"BACKEND_ADDRESS": "http://127.0.0.1:10100", "GAME_INSTANCES_TABLE": d.table,
		"FALLBACK_REGION": "us-west", "FALLBACK_ENVIRONMENT": "prag", "FALLBACK_ARMADA_SET": "sample-game-armada-set",
	}
	cfg, err := config.LoadAllocate(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	d.store = store.NewGameInstances(stack.ddb, d.table)
	d.lifecycle = &lifecycle.Service{Store: d.store, Policy: lifecycle.DefaultPolicy}
	// Built by the allocate function's own composition root.
	clients := allocateapp.Clients{DynamoDB: stack.ddb, Secrets: stack.sm, HTTP: &http.Client{}, Metrics: io.Discard}
	d.api = httptest.NewServer(validated(t, httpapi.NewHandler(allocateapp.Routes(cfg, clients), logging.New(io.Discard, slog.LevelDebug))))
	t.Cleanup(d.api.Close)
	return d
}

// sent lists each call a stand-in received as "regionString token".
func sent(s *gfemu.Installation) []string {
	var out []string
	for _, c := range s.Calls() {
		out = append(out, c.Region+" "+c.Token)
	}
	return out
}

// summary lists attempts as "region:status", with "/rl" when rate-limited.
func summary(r response) []string {
	var out []string
	for _, a := range r.attempts() {
		s := fmt.Sprintf("%v:%v", a["region"], a["status"])
		if a["rateLimited"] == true {
			s += "/rl"
		}
		out = append(out, s)
	}
	return out
}

func TestFallbackAcrossAllocators(t *testing.T) {
	d := newTwoAllocators(t, twoAllocatorsOptions{})
	d.eu.Queue("prod-eu-central", gfemu.Answer{Status: 503, Error: "buffer exhausted"})
	r := d.allocate(t, `{"gameInstanceId": "gi-across", "desiredRegion": "EU-CENTRAL-1"}`).expect(t, 201, "")
	if r.Body["region"] != "us-west" || r.Body["fallbackUsed"] != true {
		t.Fatalf("allocated %v, want us-west by fallback", r.Raw)
	}
	if got := sent(d.eu); !reflect.DeepEqual(got, []string{"prod-eu-central eu-current"}) {
		t.Errorf("eu Allocator got %v", got)
	}
	if got := sent(d.us); !reflect.DeepEqual(got, []string{"prod-us-west us-current"}) {
		t.Errorf("us Allocator got %v", got)
	}
	if a := r.attempts(); a[0]["allocatorRegion"] != "prod-eu-central" || a[1]["allocatorRegion"] != "prod-us-west" {
		t.Errorf("attempts %v do not name the region strings sent", a)
	}
}

func TestRateLimitedAllocatorIsSkippedForItsOtherRegions(t *testing.T) {
	d := newTwoAllocators(t, twoAllocatorsOptions{})
	d.eu.Always("prod-eu-central", gfemu.Answer{Status: 429, Error: "rate limit exceeded"})
	r := d.allocate(t, `{"gameInstanceId": "gi-rl", "preferredRegions": ["eu-central-1", "eu-west", "us-west"]}`).expect(t, 201, "")
	if r.Body["region"] != "us-west" {
		t.Fatalf("allocated %s, want us-west", r.Raw)
	}
	want := []string{"eu-central-1:429/rl", "eu-central-1:429/rl", "eu-central-1:429/rl", "eu-west:0/rl", "us-west:200"}
	if got := summary(r); !reflect.DeepEqual(got, want) {
		t.Fatalf("attempts = %v, want %v", got, want)
	}
	for _, c := range d.eu.Calls() {
		if c.Region == "prod-eu-west" {
			t.Fatal("eu-west was asked although its Allocator was rate-limiting")
		}
	}
}

func TestEveryAllocatorRateLimited(t *testing.T) {
	d := newTwoAllocators(t, twoAllocatorsOptions{})
	// Retry-After over the 2 s the policy waits: each region is asked once.
	d.eu.Always("prod-eu-central", gfemu.Answer{Status: 429, Error: "slow down", RetryAfter: "5"})
	d.us.Always("prod-us-west", gfemu.Answer{Status: 429, Error: "slow down", RetryAfter: "7"})
	r := d.allocate(t, `{"gameInstanceId": "gi-all-rl", "preferredRegions": ["eu-central-1", "eu-west", "us-west"]}`).expect(t, 429, "RATE_LIMITED")
	if got := r.Header.Get("Retry-After"); got != "7" {
		t.Errorf("Retry-After = %q, want the Allocators' longest, 7", got)
	}
	want := []string{"eu-central-1:429/rl", "eu-west:0/rl", "us-west:429/rl"}
	if got := summary(r); !reflect.DeepEqual(got, want) {
		t.Fatalf("attempts = %v, want %v", got, want)
	}
	item := d.rawItem(t, "gi-all-rl")
	if str(item, "state") != "Failed" || str(item, "failureCode") != "RATE_LIMITED" {
		t.Fatalf("record = %v, want Failed RATE_LIMITED", item)
	}
	// Failed may be retried: once the limit lifts, the same id allocates.
	d.us.Always("prod-us-west", gfemu.Answer{})
	d.allocate(t, `{"gameInstanceId": "gi-all-rl", "preferredRegions": ["eu-central-1", "eu-west", "us-west"]}`).expect(t, 201, "")
}

func TestTokenRotationPerAllocator(t *testing.T) {
	d := newTwoAllocators(t, twoAllocatorsOptions{})
	d.allocate(t, `{"gameInstanceId": "gi-rot-1", "desiredRegion": "eu-central-1"}`).expect(t, 201, "")
	// eu rotates: its old token stops working, its secret lists a new last token.
	d.eu.SetTokens("eu-next")
	putSecret(t, d.euSecret, `{"tokens":["eu-current","eu-next"]}`)
	r := d.allocate(t, `{"gameInstanceId": "gi-rot-2", "desiredRegion": "eu-central-1"}`).expect(t, 201, "")
	if r.Body["region"] != "eu-central-1" {
		t.Fatalf("allocated %s, want eu-central-1 after one refresh", r.Raw)
	}
	var tokens []string
	for _, c := range d.eu.Calls() {
		tokens = append(tokens, c.Token)
	}
	// The second call is refused (401) and triggers one refresh.
	if want := []string{"eu-current", "eu-current", "eu-next"}; !reflect.DeepEqual(tokens, want) {
		t.Errorf("eu Allocator got tokens %v, want %v", tokens, want)
	}
	// us is untouched by eu's rotation.
	d.allocate(t, `{"gameInstanceId": "gi-rot-3", "desiredRegion": "us-west"}`).expect(t, 201, "")
	if got := sent(d.us); !reflect.DeepEqual(got, []string{"prod-us-west us-current"}) {
		t.Errorf("us Allocator got %v", got)
	}
}

func TestOneAllocatorsSecretFailsOnlyItsRegions(t *testing.T) {
	tests := []struct {
		name      string
		secret    func(t *testing.T) string // eu's tokenSecretId
		wantFirst string                    // the eu attempt, as summary() shows it
		wantError string
	}{
		{"missing secret", func(*testing.T) string { return "arn:aws:secretsmanager:us-east-1:123456789012:secret:no-such-secret" },
			"eu-central-1:0", "token could not be read"},
		{"wrong token in it", func(t *testing.T) string { return newSecret(t, `{"tokens":["not-eus-token"]}`) },
			"eu-central-1:401", "401"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newTwoAllocators(t, twoAllocatorsOptions{euSecretID: tc.secret(t)})
			r := d.allocate(t, `{"gameInstanceId": "gi-sec", "desiredRegion": "eu-central-1"}`).expect(t, 201, "")
			if r.Body["region"] != "us-west" || r.Body["fallbackUsed"] != true {
				t.Fatalf("allocated %s, want us-west by fallback", r.Raw)
			}
			first := r.attempts()[0]
			if got := fmt.Sprintf("%v:%v", first["region"], first["status"]); got != tc.wantFirst || !strings.Contains(fmt.Sprint(first["error"]), tc.wantError) {
				t.Fatalf("eu attempt = %v, want %s saying %q", first, tc.wantFirst, tc.wantError)
			}
			// The us Allocator's own regions are not affected at all.
			r = d.allocate(t, `{"gameInstanceId": "gi-sec-us", "desiredRegion": "us-west"}`).expect(t, 201, "")
			if len(r.attempts()) != 1 {
				t.Fatalf("us-west took attempts %v", r.attempts())
			}
		})
	}
}
