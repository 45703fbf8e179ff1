package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
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

// functionTimeout is template.yaml's Globals Timeout: the deadline the
// handler sees, which bounds its upstream attempts.
const functionTimeout = 30 * time.Second

// InProcess is the allocate function's handler built in this process the
// way functions/allocate/main.go builds it, from the same environment the
// stack gives the bootstrap, but with SDK clients that count requests. The
// bootstraps are separate processes whose clients cannot be instrumented.
type InProcess struct {
	Counter *SDKCounter
	Logs    *countingWriter // what the function would send to CloudWatch Logs
	proxy   *httpadapter.HandlerAdapterV2
	seq     int
}

// NewInProcess wires the handler against the stack's components.
func NewInProcess(s *Stack) (*InProcess, error) { return newInProcess(s, nil) }

// newInProcess is NewInProcess with some of the environment's variables
// replaced by override's.
func newInProcess(s *Stack, override map[string]string) (*InProcess, error) {
	cfg, err := functionConfig(s, AllocateFunction, override)
	if err != nil {
		return nil, err
	}
	ip := &InProcess{Counter: NewSDKCounter(), Logs: &countingWriter{}}
	log := logging.New(ip.Logs, cfg.LogLevel)
	// The function's own composition root, with counting clients.
	ip.proxy = httpadapter.NewV2(allocateapp.Handler(cfg, countedClients(s, ip.Counter, ip.Logs), log))
	return ip, nil
}

// functionConfig is fn's configuration from the environment the stack
// gives its bootstrap, with override's variables replaced.
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
		return config.Allocate{}, fmt.Errorf("in-process %s configuration: %w", fn, err)
	}
	return cfg, nil
}

// countedClients are the functions' clients against the stack's DynamoDB
// Local and moto, each counting its requests into counter.
func countedClients(s *Stack, counter *SDKCounter, metrics io.Writer) allocateapp.Clients {
	sm := secretsmanager.NewFromConfig(harness.AWSConfig(), func(o *secretsmanager.Options) {
		o.BaseEndpoint = aws.String(s.SecretsManager)
		o.APIOptions = append(o.APIOptions, counter.APIOptions("SecretsManager")...)
	})
	return allocateapp.Clients{DynamoDB: countedDynamoDB(s, counter), Secrets: sm, HTTP: &http.Client{}, Metrics: metrics, SQS: countedSQS(s, counter, "SQS")}
}

// countedDynamoDB is a client of the stack's DynamoDB Local counting into
// counter.
func countedDynamoDB(s *Stack, counter *SDKCounter) *dynamodb.Client {
	return dynamodb.NewFromConfig(harness.AWSConfig(), func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(s.DynamoDB)
		o.APIOptions = append(o.APIOptions, counter.APIOptions("DynamoDB")...)
	})
}

// countedSQS is a client of moto's SQS counting into counter under service.
func countedSQS(s *Stack, counter *SDKCounter, service string) *sqs.Client {
	return sqs.NewFromConfig(harness.AWSConfig(), func(o *sqs.Options) {
		o.BaseEndpoint = aws.String(s.Moto)
		o.APIOptions = append(o.APIOptions, counter.APIOptions(service)...)
	})
}

// Allocate runs one POST /v1/allocations the way the Lambda runtime does
// (decode the event, call the handler with a deadline and request id,
// encode the response) and returns the status and the time it took.
func (ip *InProcess) Allocate(ctx context.Context, gameInstanceID, region string) (int, time.Duration, error) {
	resp, took, err := ip.invoke(ctx, gameInstanceID, region)
	return resp.StatusCode, took, err
}

// Placement is Allocate that also returns where the answer says the
// instance went: "room", "allocator", or "" when nowhere.
func (ip *InProcess) Placement(ctx context.Context, gameInstanceID, region string) (int, string, time.Duration, error) {
	resp, took, err := ip.invoke(ctx, gameInstanceID, region)
	if err != nil {
		return 0, "", took, err
	}
	var answer struct {
		Placement string `json:"placement"`
	}
	if err := json.Unmarshal([]byte(resp.Body), &answer); err != nil {
		return resp.StatusCode, "", took, fmt.Errorf("the answer is not an allocation: %w", err)
	}
	return resp.StatusCode, answer.Placement, took, nil
}

func (ip *InProcess) invoke(ctx context.Context, gameInstanceID, region string) (events.APIGatewayV2HTTPResponse, time.Duration, error) {
	ip.seq++
	raw, err := allocateEvent(gameInstanceID, region, ip.seq)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, 0, err
	}
	return ip.handle(ctx, raw)
}

// Post runs POST /v1/allocations with req as its body, as Allocate does.
// Safe for one caller at a time.
func (ip *InProcess) Post(ctx context.Context, req allocclient.AllocateRequest) (events.APIGatewayV2HTTPResponse, time.Duration, error) {
	ip.seq++
	raw, err := postEvent(req, ip.seq)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, 0, err
	}
	return ip.handle(ctx, raw)
}

// handle hands the handler one API Gateway event, raw.
func (ip *InProcess) handle(ctx context.Context, raw []byte) (events.APIGatewayV2HTTPResponse, time.Duration, error) {
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
	if _, err := json.Marshal(resp); err != nil {
		return resp, time.Since(start), err
	}
	return resp, time.Since(start), nil
}
