// Package gameliftapp is GameLiftApiFunction's composition root: a Lambda
// function URL's requests in, GameLift's placement API answered on the
// allocate use case.
package gameliftapp

import (
	"context"
	"encoding/base64"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/app"
	"github.com/gamefabric-alloc/allocsvc/shared/app/allocateapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
	"github.com/gamefabric-alloc/allocsvc/shared/gameliftapi"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/secrets"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
	"github.com/gamefabric-alloc/allocsvc/shared/wait"
)

// API is the placement API as the function runs it: AllocateFunction's
// use case (and PlacementFunction's, for what waits in the queue), the
// placements' table, and the access keys' secret. region is the
// function's AWS Region: the one its signatures must be scoped to.
func API(cfg config.GameLiftAPI, c allocateapp.Clients, region string) *gameliftapi.Handler {
	records, servers := app.Records(c.DynamoDB, cfg.GameInstancesTable, cfg.GameServersTable, cfg.Allocation.Retention)
	queues := make(map[string]gameliftapi.Queue, len(cfg.Queues))
	for name, q := range cfg.Queues {
		var policies []allocation.LatencyPolicy
		for _, p := range q.LatencyPolicies {
			lp := allocation.LatencyPolicy{MaxPlayerLatencyMs: float64(p.MaxLatencyMs)}
			if p.DurationSeconds > 0 {
				lp.DurationSeconds = &p.DurationSeconds
			}
			policies = append(policies, lp)
		}
		queues[name] = gameliftapi.Queue{Regions: q.Regions, Timeout: q.Timeout, GameServerVersion: q.GameServerVersion, LatencyPolicies: policies}
	}
	svc := &gameliftapi.Service{
		Allocations:    allocateapp.Service(cfg.Allocate, c, records, servers),
		Placements:     store.NewGameSessionPlacements(c.DynamoDB, cfg.PlacementsTable, cfg.Allocation.Retention),
		Cancel:         allocateapp.Ender(cfg.Allocate, records, servers),
		Queues:         queues,
		Region:         region,
		InProgressWait: defaults.GameLiftInProgressWait,
		Sleep:          wait.Sleep,
	}
	keys := secrets.NewKeys(c.Secrets, cfg.KeysSecretID, cfg.TokenCacheTTL, defaults.GameLiftKeysRefreshEvery, nil)
	return &gameliftapi.Handler{Service: svc, Verifier: gameliftapi.Verifier{Keys: keys, Region: region, Now: time.Now}}
}

// Handler is GameLiftApiFunction behind its function URL (payload 2.0):
// the request exactly as the client signed it, not through the usual
// net/http adapter, which splits every header on commas (the
// Authorization header among them).
func Handler(api *gameliftapi.Handler, log *slog.Logger) func(context.Context, events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
	return func(ctx context.Context, ev events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
		ctx = logging.WithLogger(ctx, log)
		var requestID, account string
		if lc, ok := lambdacontext.FromContext(ctx); ok {
			requestID = lc.AwsRequestID
			// arn:aws:lambda:<region>:<account>:function:<name>
			if parts := strings.Split(lc.InvokedFunctionArn, ":"); len(parts) > 4 {
				account = parts[4]
			}
		}
		req := gameliftapi.Request{Method: ev.RequestContext.HTTP.Method, Path: ev.RawPath, Query: ev.RawQueryString,
			Header: make(map[string]string, len(ev.Headers)), Body: []byte(ev.Body)}
		for k, v := range ev.Headers {
			req.Header[strings.ToLower(k)] = v
		}
		if ev.IsBase64Encoded {
			body, err := base64.StdEncoding.DecodeString(ev.Body)
			if err != nil {
				body = nil // not what a function URL sends; answered as an empty body
			}
			req.Body = body
		}
		res := api.Serve(ctx, req, requestID, account)
		out := events.LambdaFunctionURLResponse{StatusCode: res.Status, Headers: res.Header, Body: string(res.Body)}
		if res.Header["Content-Type"] == "application/cbor" {
			out.Body, out.IsBase64Encoded = base64.StdEncoding.EncodeToString(res.Body), true
		}
		return out, nil
	}
}
