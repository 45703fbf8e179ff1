package bench

import (
	"context"
	"encoding/json"
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

// functionTimeout is template.yaml's Globals Timeout: the deadline the
// handler sees, which bounds its upstream attempts.
const functionTimeout = 30 * time.Second

// InProcess is the allocate function's handler built in this process by its
// own composition root, from the environment the stack gives the
// bootstrap, but with SDK clients that count requests: the bootstraps are
// separate processes whose clients cannot be instrumented.
type InProcess struct {
	Counter *SDKCounter
	Logs    *countingWriter // what the function would send to CloudWatch Logs
	proxy   *httpadapter.HandlerAdapterV2
	seq     int
}

// NewInProcess wires the handler against the stack's components, with
// override's variables replacing the environment's.
func NewInProcess(s *Stack, override map[string]string) (*InProcess, error) {
	cfg, err := functionConfig(s, AllocateFunction, override)
	if err != nil {
		return nil, err
	}
	ip := &InProcess{Counter: NewSDKCounter(), Logs: &countingWriter{}}
	ip.proxy = httpadapter.NewV2(allocateapp.Handler(cfg, countedClients(s, ip.Counter, ip.Logs), logging.New(ip.Logs, cfg.LogLevel)))
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
		return cfg, fmt.Errorf("in-process %s configuration: %w", fn, err)
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

// allocateRequest is what a game backend sends for id in region.
func allocateRequest(id, region string) allocclient.AllocateRequest {
	return allocclient.AllocateRequest{GameInstanceID: id, DesiredRegion: region, GameServerVersion: Version, ServerArgs: "-map=arena"}
}

// Post runs POST /v1/allocations with req as its body the way the Lambda
// runtime does: the event decoded, the handler called with a deadline and
// a request id, the response encoded. One caller at a time.
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

// apiEvent is the payload-2.0 event API Gateway's HTTP API sends the
// allocate function for POST /v1/allocations, as local/gateway builds it.
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
