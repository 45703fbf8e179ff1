package allocateapp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/gamefabric-alloc/allocsvc/shared/app/allocateapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// canned answers every request the allocate path makes, on the client's
// side (no server: only the function's own work is measured), as DynamoDB,
// Secrets Manager and GameFabric answer: a claim and an outcome that
// succeed (the outcome returns the record), no free room, a healthy
// region, a token, a server.
type canned struct{ outcome atomic.Pointer[string] }

func (c *canned) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
	}
	answer := "{}"
	switch target := r.Header.Get("X-Amz-Target"); {
	case strings.HasSuffix(target, ".UpdateItem") && bytes.Contains(body, []byte(`"ReturnValues":"ALL_NEW"`)):
		answer = *c.outcome.Load()
	case strings.HasSuffix(target, ".Query"):
		answer = `{"Count":0,"Items":[],"ScannedCount":0}`
	case strings.HasSuffix(target, ".BatchGetItem"):
		answer = `{"Responses":{"RegionHealth":[{"region":{"S":"us-west"},"state":{"S":"Deployed"},"consecutiveFailures":{"N":"0"}}]},"UnprocessedKeys":{}}`
	case strings.HasSuffix(target, ".GetSecretValue"):
		answer = `{"Name":"tokens","SecretString":"{\"tokens\":[\"bench-token\"]}"}`
	case target == "":
		answer = `{"address":"10.0.0.7:7777","ip":"10.0.0.7","ports":{"game":7777},"token":"t"}`
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(answer)), ContentLength: int64(len(answer)), Request: r}, nil
}

// outcomeOf is an Allocated record as DynamoDB's ALL_NEW returns it.
func outcomeOf(id string) string {
	return fmt.Sprintf(`{"Attributes":{"gameInstanceId":{"S":%q},"state":{"S":"Allocated"},"desiredRegion":{"S":"us-west"},`+
		`"gameServerVersion":{"S":"prag::sample-game-armada-set"},"serverArgs":{"S":"-map=arena"},"environment":{"S":"prag"},`+
		`"armadaSet":{"S":"sample-game-armada-set"},"region":{"S":"us-west"},"fallbackUsed":{"BOOL":false},`+
		`"server":{"M":{"address":{"S":"10.0.0.7:7777"},"ip":{"S":"10.0.0.7"},"ports":{"M":{"game":{"N":"7777"}}}}},`+
		`"placement":{"S":"allocator"},"attempts":{"L":[{"M":{"region":{"S":"us-west"},"status":{"N":"200"},"durationMs":{"N":"20"},"placement":{"S":"allocator"}}}]},`+
		`"partnerGameTokenHash":{"S":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},"claimId":{"S":"c0ffee0c0ffee0c0ffee0c0ffee0c0ff"},`+
		`"leaseExpiresAt":{"N":"1767225660000"},"createdAt":{"S":"2026-01-01T00:00:00.123456789Z"},"updatedAt":{"S":"2026-01-01T00:00:00.143456789Z"},`+
		`"version":{"N":"2"},"healthShard":{"S":"07"},"healthDeadline":{"N":"1767225720000"}}}`, id)
}

// BenchmarkAllocate is one fresh allocation through AllocateFunction's
// handler as the Lambda runtime calls it (the API event decoded, the
// response encoded), configured as template.yaml deploys it (rooms, region
// health), every AWS and GameFabric answer canned on the client's side:
// the CPU and the allocations of the function's own work, the AWS SDK's
// included, with no network. `make bench` measures the same path against
// DynamoDB Local (its profile, and the time beyond the floor).
func BenchmarkAllocate(b *testing.B) {
	env := map[string]string{"GAMEFABRIC_URL": "https://gamefabric.example/", "GAMEFABRIC_ALLOCATE_PATH": "/allocate",
		"ALLOCATOR_TOKEN_SECRET_ID": "tokens", "BACKEND_ADDRESS": "https://backend.example", "GAME_INSTANCES_TABLE": "GameInstances",
		"GAME_SERVERS_TABLE": "GameServers", "REGION_HEALTH_TABLE": "RegionHealth", "FALLBACK_REGION": "us-west",
		"FALLBACK_ENVIRONMENT": "prag", "FALLBACK_ARMADA_SET": "sample-game-armada-set"}
	cfg, err := config.LoadAllocate(func(k string) string { return env[k] })
	if err != nil {
		b.Fatal(err)
	}
	rt := &canned{}
	awsCfg := aws.Config{Region: "us-east-1", Credentials: aws.AnonymousCredentials{}, HTTPClient: &http.Client{Transport: rt}}
	awsCfg.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: "AKID", SecretAccessKey: "SECRET"}, nil
	})
	clients := allocateapp.Clients{DynamoDB: dynamodb.NewFromConfig(awsCfg), Secrets: secretsmanager.NewFromConfig(awsCfg),
		HTTP: &http.Client{Transport: rt}, Metrics: io.Discard}
	proxy := httpadapter.NewV2(allocateapp.Handler(cfg, clients, logging.New(io.Discard, cfg.LogLevel)))
	event := func(i int) []byte {
		body := fmt.Sprintf(`{"gameInstanceId":"bench-%d","desiredRegion":"us-west","gameServerVersion":"prag::sample-game-armada-set","serverArgs":"-map=arena"}`, i)
		ev, _ := json.Marshal(events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: "POST /v1/allocations", RawPath: "/v1/allocations",
			Headers: map[string]string{"content-type": "application/json", "host": "api.example"}, Body: body,
			RequestContext: events.APIGatewayV2HTTPRequestContext{RequestID: fmt.Sprintf("req-%d", i),
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: http.MethodPost, Path: "/v1/allocations"}}})
		return ev
	}
	invoke := func(i int) {
		out := outcomeOf(fmt.Sprintf("bench-%d", i))
		rt.outcome.Store(&out)
		raw := event(i)
		var ev events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(raw, &ev); err != nil {
			b.Fatal(err)
		}
		ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: ev.RequestContext.RequestID})
		resp, err := proxy.ProxyWithContext(ctx, ev)
		if err != nil || resp.StatusCode != http.StatusCreated {
			b.Fatalf("answer %d %v: %s", resp.StatusCode, err, resp.Body)
		}
		if _, err := json.Marshal(resp); err != nil {
			b.Fatal(err)
		}
	}
	invoke(-1) // the token, and the clients' first use
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		invoke(i)
	}
}
