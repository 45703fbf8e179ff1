//go:build integration

package stack

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
)

// The default installation really runs as configured: two Allocators,
// each on its own URL with its own tokens and secret, and a Ping Service
// with its own, discovering through both and naming Regions.
func TestStartComponentsServesEachAllocatorAndThePingService(t *testing.T) {
	c, ctx := startDefaultComponents(t)
	us, eu := c.Allocators[0], c.Allocators[1]

	sm := harness.NewSecretsManager(harness.AWSConfig(), c.SecretsManager)
	for arn, want := range map[string][]string{us.SecretARN: us.AllocatorTokens, eu.SecretARN: eu.AllocatorTokens, c.Ping.SecretARN: c.Ping.Tokens} {
		out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
		if err != nil {
			t.Fatalf("secret %s: %v", arn, err)
		}
		var got struct{ Tokens []string }
		if err := json.Unmarshal([]byte(aws.ToString(out.SecretString)), &got); err != nil || strings.Join(got.Tokens, ",") != strings.Join(want, ",") {
			t.Errorf("secret %s = %s, want tokens %v", arn, aws.ToString(out.SecretString), want)
		}
	}

	call := func(method, url, token, body string) int {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	register := func(addr, region string) string {
		return `{"address":"` + addr + `","priority":0,"region":"` + region + `"}`
	}
	for _, tc := range []struct {
		name, method, url, token, body string
		want                           int
	}{
		{"us registry, us token", "POST", us.RegistryURL(), us.RegistryToken(), register("127.0.0.1:9001", "dev-us-west"), 201},
		{"eu registry, eu token", "POST", eu.RegistryURL(), eu.RegistryToken(), register("127.0.0.1:9002", "dev-eu-central-1"), 201},
		{"eu registry, previous eu token", "POST", eu.RegistryURL(), eu.RegistryTokens[0], register("127.0.0.1:9003", "dev-eu-central-1"), 201},
		{"eu registry, us token", "POST", eu.RegistryURL(), us.RegistryToken(), register("127.0.0.1:9004", "dev-eu-central-1"), 401},
		{"us allocate, eu token", "POST", us.AllocateURL(), eu.AllocatorToken(), `{"region":"dev-us-west"}`, 401},
		{"eu allocate, eu token, us string", "POST", eu.AllocateURL(), eu.AllocatorToken(), `{"region":"dev-us-west"}`, 404},
		{"ping, us allocator token", "GET", c.Ping.URL, us.AllocatorToken(), "", 401},
	} {
		if got := call(tc.method, tc.url, tc.token, tc.body); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}

	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.Ping.URL, nil)
	req.Header.Set("Authorization", "Bearer "+c.Ping.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ping struct {
		Regions map[string][]struct{ Port int }
	}
	if err := json.NewDecoder(resp.Body).Decode(&ping); err != nil {
		t.Fatal(err)
	}
	if len(ping.Regions) != 2 || len(ping.Regions["us-west"]) != 1 || len(ping.Regions["eu-central-1"]) != 2 {
		t.Fatalf("ping = %+v, want us-west with one target and eu-central-1 with two, by Region name", ping.Regions)
	}
}

// startDefaultComponents starts the default installation on free ports;
// the test has 2 minutes (ctx), and the components close when it ends.
func startDefaultComponents(t *testing.T) (*Components, context.Context) {
	t.Helper()
	cfg := Defaults()
	cfg.AnyFreePorts()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	c, err := StartComponents(ctx, cfg, "../..")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, ctx
}
