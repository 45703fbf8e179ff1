package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
	"github.com/gamefabric-alloc/allocsvc/shared/app/allocateapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// functionTimeout is template.yaml's Globals Timeout.
const functionTimeout = 30 * time.Second

// InProcess is the allocate handler built here by its own composition root
// from the stack's environment, with SDK clients that count requests (the
// bootstraps' clients cannot be instrumented).
type InProcess struct {
	Counter *SDKCounter
	Logs    *countingWriter // what the function would send to CloudWatch Logs
	proxy   *httpadapter.HandlerAdapterV2
	seq     int
}

// NewInProcess builds it, override's variables replacing the environment's.
func NewInProcess(s *Stack, override map[string]string) (*InProcess, error) {
	cfg, err := functionConfig(s, AllocateFunction, override)
	if err != nil {
		return nil, err
	}
	ip := &InProcess{Counter: NewSDKCounter(), Logs: &countingWriter{}}
	ip.proxy = httpadapter.NewV2(allocateapp.Handler(cfg, countedClients(s, ip.Counter, ip.Logs), logging.New(ip.Logs, cfg.LogLevel)))
	return ip, nil
}

func functionConfig(s *Stack, fn string, override map[string]string) (config.Allocate, error) {
	env, err := s.FunctionEnv(fn, s.Refs)
	if err != nil {
		return config.Allocate{}, fmt.Errorf("in-process %s: %w", fn, err)
	}
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	maps.Copy(vars, override)
	cfg, err := config.LoadAllocate(func(k string) string { return vars[k] })
	if err != nil {
		return cfg, fmt.Errorf("in-process %s configuration: %w", fn, err)
	}
	return cfg, nil
}

func countedClients(s *Stack, counter *SDKCounter, metrics io.Writer) allocateapp.Clients {
	sm := secretsmanager.NewFromConfig(harness.AWSConfig(), func(o *secretsmanager.Options) {
		o.BaseEndpoint = aws.String(s.SecretsManager)
		o.APIOptions = append(o.APIOptions, counter.APIOptions("SecretsManager")...)
	})
	return allocateapp.Clients{DynamoDB: countedDynamoDB(s, counter), Secrets: sm, HTTP: &http.Client{}, Metrics: metrics, SQS: countedSQS(s, counter, "SQS")}
}

func countedDynamoDB(s *Stack, counter *SDKCounter) *dynamodb.Client {
	return dynamodb.NewFromConfig(harness.AWSConfig(), func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(s.DynamoDB)
		o.APIOptions = append(o.APIOptions, counter.APIOptions("DynamoDB")...)
	})
}

func countedSQS(s *Stack, counter *SDKCounter, service string) *sqs.Client {
	return sqs.NewFromConfig(harness.AWSConfig(), func(o *sqs.Options) {
		o.BaseEndpoint = aws.String(s.Moto)
		o.APIOptions = append(o.APIOptions, counter.APIOptions(service)...)
	})
}

func allocateRequest(id, region string) allocclient.AllocateRequest {
	return allocclient.AllocateRequest{GameInstanceID: id, DesiredRegion: region, GameServerVersion: Version, ServerArgs: "-map=arena"}
}

// Post runs POST /v1/allocations the way the Lambda runtime does: the
// event decoded, a deadline and request id, the response encoded.
func (ip *InProcess) Post(ctx context.Context, req allocclient.AllocateRequest) (events.APIGatewayV2HTTPResponse, time.Duration, error) {
	ip.seq++
	raw, err := json.Marshal(apiEvent(req, ip.seq))
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, 0, err
	}
	start := time.Now()
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &ev); err != nil {
		return events.APIGatewayV2HTTPResponse{}, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, functionTimeout)
	defer cancel()
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: ev.RequestContext.RequestID})
	resp, err := ip.proxy.ProxyWithContext(ctx, ev)
	if err != nil {
		return resp, time.Since(start), fmt.Errorf("handler: %w", err)
	}
	_, err = json.Marshal(resp)
	return resp, time.Since(start), err
}

// apiEvent is the HTTP API's payload-2.0 event, as local/gateway builds it.
func apiEvent(request allocclient.AllocateRequest, seq int) events.APIGatewayV2HTTPRequest {
	body, _ := json.Marshal(request)
	now := time.Now().UTC()
	return events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "POST /v1/allocations", RawPath: "/v1/allocations",
		Headers: map[string]string{"content-type": "application/json", "content-length": strconv.Itoa(len(body)),
			"host": "127.0.0.1", "user-agent": "allocsvc-bench"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey: "POST /v1/allocations", AccountID: "000000000000", Stage: "$default",
			RequestID: "bench-" + strconv.Itoa(seq), APIID: "local", DomainName: "127.0.0.1", DomainPrefix: "127",
			Time: now.Format("02/Jan/2006:15:04:05 -0700"), TimeEpoch: now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/v1/allocations",
				Protocol: "HTTP/1.1", SourceIP: "127.0.0.1", UserAgent: "allocsvc-bench"},
		},
		Body: string(body),
	}
}

// apiResult is one call through the local HTTP API.
type apiResult struct {
	Status int
	Code   string
	Body   *allocclient.Allocation
	Took   time.Duration
	Err    error
}

// Outcome is "201", "409 ALLOCATION_IN_PROGRESS" or "transport error".
func (r apiResult) Outcome() string {
	switch {
	case r.Err != nil:
		return "transport error"
	case r.Code != "":
		return strconv.Itoa(r.Status) + " " + r.Code
	}
	return strconv.Itoa(r.Status)
}

func (r apiResult) server() string {
	if r.Body == nil || r.Body.Server == nil {
		return ""
	}
	return r.Body.Server.Address
}

// newAPIClient makes single calls (no retries) and keeps conns idle
// connections, so concurrent callers pay no TCP handshake per call.
func newAPIClient(apiURL string, conns int) *allocclient.Client {
	c, err := allocclient.New(allocclient.Options{BaseURL: apiURL, MaxAttempts: 1,
		HTTPClient: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			MaxIdleConns: conns, MaxIdleConnsPerHost: conns, IdleConnTimeout: time.Minute}}})
	if err != nil {
		panic(err) // the stack's own URL: a bug, not an input
	}
	return c
}

func postAllocation(ctx context.Context, c *allocclient.Client, gameInstanceID, region string) apiResult {
	return postRequest(ctx, c, allocateRequest(gameInstanceID, region))
}

func postRequest(ctx context.Context, c *allocclient.Client, req allocclient.AllocateRequest) apiResult {
	start := time.Now()
	a, err := c.Allocate(ctx, req)
	r := apiResult{Body: a, Took: time.Since(start), Status: http.StatusOK}
	var e *allocclient.Error
	switch {
	case err == nil && a.Created:
		r.Status = http.StatusCreated
	case errors.As(err, &e):
		r.Status, r.Code, r.Body = e.Status, e.Code, e.Allocation
	case err != nil:
		r.Err, r.Status = err, 0
	}
	return r
}

func postJSON(ctx context.Context, url, token string, body []byte) (status int, answer []byte, took time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, time.Since(start), err
	}
	defer resp.Body.Close()
	answer, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, answer, time.Since(start), err
}
