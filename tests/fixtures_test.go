//go:build integration

package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/template"
	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/allocators"
	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi/allocationsapi"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi/regionsapi"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/placementqueue"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
	"github.com/gamefabric-alloc/allocsvc/shared/roomcallback"
	"github.com/gamefabric-alloc/allocsvc/shared/rooms"
	"github.com/gamefabric-alloc/allocsvc/shared/secrets"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
	"github.com/gamefabric-alloc/allocsvc/shared/store/pingtable"
	"github.com/gamefabric-alloc/allocsvc/shared/store/regiontable"
)

var seq atomic.Int64

func unique(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano()%1e9, seq.Add(1))
}

// newTables creates every table of template.yaml under fresh names and
// returns them by logical ID.
func newTables(t *testing.T) map[string]string {
	t.Helper()
	tables, err := stack.template.Tables()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, tbl := range tables {
		names[tbl.LogicalID] = unique(tbl.LogicalID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := template.CreateTables(ctx, stack.ddb, stack.template, names); err != nil {
		t.Fatalf("create tables: %v", err)
	}
	return names
}

func newTable(t *testing.T) string { return newTables(t)["GameInstancesTable"] }

func newPingTable(t *testing.T) string { return newTables(t)["PingCacheTable"] }

// newSecret stores value in moto's Secrets Manager and returns its ARN.
func newSecret(t *testing.T, value string) string {
	t.Helper()
	out, err := stack.sm.CreateSecret(context.Background(), &secretsmanager.CreateSecretInput{
		Name: aws.String(unique("gamefabric/allocator-token")), SecretString: aws.String(value)})
	if err != nil {
		t.Fatalf("create secret: %v", err)
	}
	return *out.ARN
}

func putSecret(t *testing.T, arn, value string) {
	t.Helper()
	if _, err := stack.sm.PutSecretValue(context.Background(), &secretsmanager.PutSecretValueInput{
		SecretId: aws.String(arn), SecretString: aws.String(value)}); err != nil {
		t.Fatalf("put secret: %v", err)
	}
}

// apiContract is docs/openapi.yaml, loaded once. Every API the tests serve
// through newEnv or startLocalStack is wrapped in its Middleware, so each
// request and response they exchange is validated against the contract.
var apiContract struct {
	once sync.Once
	doc  *Document
	err  error
}

func contractDocument(t *testing.T) *Document {
	t.Helper()
	apiContract.once.Do(func() { apiContract.doc, apiContract.err = Load(stack.repoRoot) })
	if apiContract.err != nil {
		t.Fatalf("load the API contract: %v", apiContract.err)
	}
	return apiContract.doc
}

// validated wraps h so that every exchange is checked against the contract;
// a violation fails t with the method, path, status and what does not match.
// Call it before registering the cleanup that stops the server serving h,
// so that the server stops (and its last handlers report) first.
func validated(t *testing.T, h http.Handler) http.Handler {
	return contractDocument(t).Middleware(h, contractReporter(t))
}

// contractReporter fails t with a violation. A handler may still finish
// after t has (a stack's server closes without waiting for its handlers),
// and a test may no longer report then: such a late violation is printed.
func contractReporter(t *testing.T) func(error) {
	var mu sync.Mutex
	ended := false
	t.Cleanup(func() { mu.Lock(); ended = true; mu.Unlock() })
	return func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if ended {
			fmt.Fprintf(os.Stderr, "contract violation after %s ended: %v\n", t.Name(), err)
			return
		}
		t.Errorf("contract: %v", err)
	}
}

// env is one in-process service on the real components: the allocation,
// link-back and regions routes on one server, as the HTTP API would route
// them, each exchange validated against the API contract.
type env struct {
	stub   *gfemu.Installation
	table  string
	secret string
	store  *store.GameInstances
	// servers keeps the game servers that offered rooms (GameServersTable).
	servers      *store.GameServers
	serversTable string
	pings        *pingtable.Table // what GET /v1/regions serves
	lifecycle    *lifecycle.Service
	api          *httptest.Server
	// svc is the allocation use case behind the API, and the queue
	// worker's (placementQueue, when the options ask for one).
	svc            *allocation.Service
	placementQueue string
	// matchesTable is MatchesTable (FlexMatch matches kept).
	matchesTable string
	health       *regiontable.Table // RegionHealthTable
}

type envOptions struct {
	fallbackRegion string
	attemptTimeout time.Duration
	lease          time.Duration
	secretValue    string
	validTokens    []string
	now            func() time.Time // the clock of records and health, default time.Now
	logs           io.Writer        // where the handlers log, default nowhere
	allocatorURL   string           // the allocate URL, default the stub's
	linkTimeout    time.Duration    // default lifecycle.DefaultPolicy's
	ddbEndpoint    string           // where the service reaches DynamoDB, default DynamoDB Local
	smEndpoint     string           // where it reaches Secrets Manager, default moto
	secretID       string           // the secret it reads, default the one created
	roomCallback   time.Duration    // ROOM_CALLBACK_TIMEOUT, default the deployment's
	// queue: placements may wait in a placement queue on moto's SQS
	// (queueEndpoint, when set, is where the service sends to instead).
	queue         bool
	queueEndpoint string
	queueTimeout  time.Duration // QUEUE_TIMEOUT
	// agones: agonesRegion is served by an Agones allocator, and region
	// health is recorded (agones_helpers_test.go).
	agones *agonesOptions
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	if o.secretValue == "" {
		o.secretValue, o.validTokens = `{"tokens":["old-token","current-token"]}`, []string{"current-token"}
	}
	stub := gfemu.Start(o.validTokens...)
	t.Cleanup(stub.Close)
	tables := newTables(t)
	e := &env{stub: stub, table: tables["GameInstancesTable"], secret: newSecret(t, o.secretValue), matchesTable: tables["MatchesTable"]}
	ddb, sm := stack.ddb, stack.sm
	if o.ddbEndpoint != "" {
		ddb = harness.NewDynamoDB(harness.AWSConfig(), o.ddbEndpoint)
	}
	if o.smEndpoint != "" {
		sm = harness.NewSecretsManager(harness.AWSConfig(), o.smEndpoint)
	}
	if o.secretID == "" {
		o.secretID = e.secret
	}
	e.serversTable = tables["GameServersTable"]
	e.servers = store.NewGameServers(ddb, e.serversTable, e.table, 24*time.Hour)
	e.store = store.NewGameInstances(ddb, e.table).WithRooms(e.servers)
	if o.logs == nil {
		o.logs = io.Discard
	}
	policy := lifecycle.DefaultPolicy
	if o.linkTimeout > 0 {
		policy.LinkTimeout = o.linkTimeout
	}
	e.lifecycle = &lifecycle.Service{Store: e.store, Policy: policy, Now: o.now, Rooms: true}
	if o.allocatorURL == "" {
		o.allocatorURL = stub.AllocateURL()
	}
	var queue allocation.Queue
	if o.queue {
		e.placementQueue = newPlacementQueue(t)
		api := motoSQS()
		if o.queueEndpoint != "" {
			api = sqsAt(o.queueEndpoint)
		}
		queue = placementqueue.Queue{API: api, URL: e.placementQueue}
	}
	// The deployment's settings, but for what the test sets.
	ao := allocation.DefaultOptions()
	ao.Queue, ao.Store, ao.Now = queue, e.store, o.now
	ao.Allocator = allocators.Allocator{Client: gamefabric.NewClient(&http.Client{}, o.allocatorURL)}
	ao.Tokens = secrets.NewTokenSource(sm, o.secretID, time.Minute, nil)
	ao.Defaults.Region, ao.Defaults.Environment, ao.Defaults.ArmadaSet, ao.Defaults.QueueTimeout = o.fallbackRegion, "prag", "sample-game-armada-set", o.queueTimeout
	ao.BackendAddress = "http://127.0.0.1:10100"
	ao.Retry = &allocation.RetryPolicy{Max429Retries: 2, BaseBackoff: 20 * time.Millisecond, MaxWait: 2 * time.Second,
		MaxContentionRetries: allocation.DefaultRetryPolicy.MaxContentionRetries, ContentionBackoff: allocation.DefaultRetryPolicy.ContentionBackoff}
	ao.LinkTimeout = policy.LinkTimeout
	if o.attemptTimeout > 0 {
		ao.AttemptTimeout = o.attemptTimeout
	}
	if o.lease > 0 {
		ao.Lease = o.lease
	}
	if o.roomCallback == 0 {
		o.roomCallback = defaults.RoomCallbackTimeout
	}
	ao.Rooms = &rooms.Pool{Store: e.servers, Caller: roomcallback.New(nil), CallbackTimeout: o.roomCallback}
	health := regiontable.New(ddb, tables["RegionHealthTable"], regionhealth.DefaultBreakerPolicy)
	e.health = health
	if o.agones != nil {
		breaker := &regionhealth.Breaker{Store: health, Policy: regionhealth.DefaultBreakerPolicy}
		ao.Upstreams, ao.Health = agonesUpstreams(t, o.agones, stub, e.secret, sm), breaker
	}
	svc := allocation.NewService(ao)
	e.pings = pingtable.New(ddb, tables["PingCacheTable"])
	now := o.now
	if now == nil {
		now = time.Now
	}
	e.svc = svc
	routes := allocationsapi.Routes(svc, e.lifecycle)
	maps.Copy(routes, httpapi.LinkBackRoutes(e.lifecycle, e.lifecycle.Policy.Period))
	maps.Copy(routes, regionsapi.Routes(e.pings, health, time.Minute, now))
	e.api = httptest.NewServer(validated(t, httpapi.NewHandler(routes, logging.New(o.logs, slog.LevelDebug))))
	t.Cleanup(e.api.Close)
	return e
}

type response struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    string
}

func (e *env) do(t *testing.T, method, path, body string) response {
	t.Helper()
	return e.doAuth(t, method, path, "", body)
}

// doAuth sends authorization (when not empty) as the Authorization header.
func (e *env) doAuth(t *testing.T, method, path, authorization, body string) response {
	t.Helper()
	req, err := http.NewRequest(method, e.api.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := response{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	if err := json.Unmarshal(raw, &r.Body); err != nil {
		t.Fatalf("%s %s: body %q is not JSON", method, path, raw)
	}
	return r
}

func (e *env) allocate(t *testing.T, body string) response {
	t.Helper()
	return e.do(t, http.MethodPost, "/v1/allocations", body)
}

func (r response) code() string {
	errObj, _ := r.Body["error"].(map[string]any)
	c, _ := errObj["code"].(string)
	return c
}

func (r response) attempts() []map[string]any {
	src := r.Body["attempts"]
	if errObj, ok := r.Body["error"].(map[string]any); ok && src == nil {
		src = errObj["attempts"]
	}
	list, _ := src.([]any)
	var out []map[string]any
	for _, a := range list {
		out = append(out, a.(map[string]any))
	}
	return out
}

func (r response) expect(t *testing.T, status int, code string) response {
	t.Helper()
	if r.Status != status || r.code() != code {
		t.Fatalf("got %d %q, want %d %q: %s", r.Status, r.code(), status, code, r.Raw)
	}
	return r
}

// rawItem reads the stored item as DynamoDB holds it.
func (e *env) rawItem(t *testing.T, id string) map[string]types.AttributeValue {
	t.Helper()
	out, err := stack.ddb.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(e.table),
		Key: map[string]types.AttributeValue{"gameInstanceId": &types.AttributeValueMemberS{Value: id}}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatalf("get item: %v", err)
	}
	return out.Item
}

func str(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func num(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberN); ok {
		return v.Value
	}
	return ""
}
