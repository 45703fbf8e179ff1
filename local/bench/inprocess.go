package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
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
func NewInProcess(s *Stack) (*InProcess, error) {
	env, err := s.FunctionEnv(AllocateFunction, s.Refs)
	if err != nil {
		return nil, fmt.Errorf("in-process handler: %w", err)
	}
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	cfg, err := config.LoadAllocate(func(k string) string { return vars[k] })
	if err != nil {
		return nil, fmt.Errorf("in-process handler configuration: %w", err)
	}
	ip := &InProcess{Counter: NewSDKCounter(), Logs: &countingWriter{}}
	log := logging.New(ip.Logs, cfg.LogLevel)
	awsCfg := harness.AWSConfig()
	db := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(s.DynamoDB)
		o.APIOptions = append(o.APIOptions, ip.Counter.APIOptions("DynamoDB")...)
	})
	sm := secretsmanager.NewFromConfig(awsCfg, func(o *secretsmanager.Options) {
		o.BaseEndpoint = aws.String(s.SecretsManager)
		o.APIOptions = append(o.APIOptions, ip.Counter.APIOptions("SecretsManager")...)
	})

	// The function's own composition root, with counting clients.
	clients := allocateapp.Clients{DynamoDB: db, Secrets: sm, HTTP: &http.Client{}, Metrics: ip.Logs}
	ip.proxy = httpadapter.NewV2(allocateapp.Handler(cfg, clients, log))
	return ip, nil
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
	var resp events.APIGatewayV2HTTPResponse
	ip.seq++
	raw, err := allocateEvent(gameInstanceID, region, ip.seq)
	if err != nil {
		return resp, 0, err
	}
	start := time.Now()
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &ev); err != nil {
		return resp, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, functionTimeout)
	defer cancel()
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: ev.RequestContext.RequestID})
	resp, err = ip.proxy.ProxyWithContext(ctx, ev)
	if err != nil {
		return resp, time.Since(start), fmt.Errorf("handler: %w", err)
	}
	if _, err := json.Marshal(resp); err != nil {
		return resp, time.Since(start), err
	}
	return resp, time.Since(start), nil
}
