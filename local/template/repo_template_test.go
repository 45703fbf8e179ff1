package template

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"go.yaml.in/yaml/v3"
)

// TestRepoTemplate pins what local tooling derives from the deployed
// template.yaml, so a template change that would silently alter local
// tables or routes shows up here first.
func TestRepoTemplate(t *testing.T) {
	tpl, err := Load("../../template.yaml")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}

	tables, err := tpl.Tables()
	if err != nil {
		t.Fatalf("Tables: %v", err)
	}
	hashKeyTable := func(key string) *dynamodb.CreateTableInput {
		return &dynamodb.CreateTableInput{
			BillingMode:          types.BillingModePayPerRequest,
			AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(key), AttributeType: types.ScalarAttributeTypeS}},
			KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(key), KeyType: types.KeyTypeHash}},
		}
	}
	gameInstances := hashKeyTable("gameInstanceId")
	gameInstances.AttributeDefinitions = append(gameInstances.AttributeDefinitions,
		types.AttributeDefinition{AttributeName: aws.String("healthShard"), AttributeType: types.ScalarAttributeTypeS},
		types.AttributeDefinition{AttributeName: aws.String("healthDeadline"), AttributeType: types.ScalarAttributeTypeN})
	gameInstances.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{{
		IndexName: aws.String("HealthDeadlineIndex"),
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("healthShard"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("healthDeadline"), KeyType: types.KeyTypeRange},
		},
		Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
	}}
	// EventsFunction reads both images of every change to these two.
	streams := &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}
	gameInstances.StreamSpecification = streams
	regionHealth := hashKeyTable("region")
	regionHealth.StreamSpecification = streams
	// The game servers that offered rooms, indexed by pool and free rooms
	// with what a session callback needs.
	gameServers := hashKeyTable("address")
	gameServers.AttributeDefinitions = append(gameServers.AttributeDefinitions,
		types.AttributeDefinition{AttributeName: aws.String("roomPool"), AttributeType: types.ScalarAttributeTypeS},
		types.AttributeDefinition{AttributeName: aws.String("freeRooms"), AttributeType: types.ScalarAttributeTypeN})
	gameServers.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{{
		IndexName: aws.String("FreeRoomsIndex"),
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("roomPool"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("freeRooms"), KeyType: types.KeyTypeRange},
		},
		Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude,
			NonKeyAttributes: []string{"ip", "ports", "callbackUrl", "callbackToken", "callbackFailures", "roomCapacity", "roomsInUse"}},
	}}
	wantTables := map[string]Table{
		"GameInstancesTable":         {LogicalID: "GameInstancesTable", Input: gameInstances, TTLAttribute: "expiresAt"},
		"GameServersTable":           {LogicalID: "GameServersTable", Input: gameServers, TTLAttribute: "expiresAt"},
		"PingCacheTable":             {LogicalID: "PingCacheTable", Input: hashKeyTable("region"), TTLAttribute: "expiresAt"},
		"MatchesTable":               {LogicalID: "MatchesTable", Input: hashKeyTable("matchId"), TTLAttribute: "expiresAt"},
		"GameSessionPlacementsTable": {LogicalID: "GameSessionPlacementsTable", Input: hashKeyTable("placementId"), TTLAttribute: "expiresAt"},
		"RegionHealthTable":          {LogicalID: "RegionHealthTable", Input: regionHealth},
	}
	if len(tables) != len(wantTables) {
		t.Fatalf("tables = %+v, want %d", tables, len(wantTables))
	}
	for _, got := range tables {
		if want := wantTables[got.LogicalID]; !reflect.DeepEqual(got, want) {
			t.Errorf("table %s:\n got %+v\nwant %+v", got.LogicalID, got, want)
		}
	}

	testRepoTemplateRoutes(t, tpl)
}

// The game servers' three routes are LinkBackFunction's function URL by
// default, and HTTP API routes (from HttpApi's DefinitionBody) only with
// GameServerEndpoint HttpApi, exactly as they were as the function's
// events.
func testRepoTemplateRoutes(t *testing.T, tpl *Template) {
	t.Helper()
	backend := []Route{
		{FunctionLogicalID: "AllocateFunction", EventName: "Allocate", Method: "POST", Path: "/v1/allocations", PayloadFormatVersion: "2.0"},
		{FunctionLogicalID: "AllocateFunction", EventName: "GetAllocation", Method: "GET", Path: "/v1/allocations/{gameInstanceId}", PayloadFormatVersion: "2.0"},
		{FunctionLogicalID: "AllocateFunction", EventName: "EndAllocation", Method: "DELETE", Path: "/v1/allocations/{gameInstanceId}", PayloadFormatVersion: "2.0"},
		{FunctionLogicalID: "RegionsFunction", EventName: "Regions", Method: "GET", Path: "/v1/regions", PayloadFormatVersion: "2.0"},
	}
	gameServers := []Route{
		{FunctionLogicalID: "LinkBackFunction", EventName: "Link", Method: "POST", Path: "/v1/game-instances/{gameInstanceId}/link", PayloadFormatVersion: "2.0"},
		{FunctionLogicalID: "LinkBackFunction", EventName: "Heartbeat", Method: "POST", Path: "/v1/game-instances/{gameInstanceId}/heartbeat", PayloadFormatVersion: "2.0"},
		{FunctionLogicalID: "LinkBackFunction", EventName: "End", Method: "POST", Path: "/v1/game-instances/{gameInstanceId}/end", PayloadFormatVersion: "2.0"},
	}
	url := FunctionURL{LogicalID: "LinkBackFunctionUrl", FunctionLogicalID: "LinkBackFunction", AuthType: "NONE", InvokeMode: "BUFFERED"}
	for _, tc := range []struct {
		endpoint string
		routes   []Route
		urls     []FunctionURL
	}{
		{"", backend, []FunctionURL{url}}, // the default: FunctionUrl
		{"FunctionUrl", backend, []FunctionURL{url}},
		{"HttpApi", append(append([]Route(nil), backend...), gameServers...), nil},
	} {
		refs := map[string]string{}
		if tc.endpoint != "" {
			refs["GameServerEndpoint"] = tc.endpoint
		}
		routes, err := tpl.HTTPRoutes(refs)
		if err != nil || !reflect.DeepEqual(routes, tc.routes) {
			t.Errorf("GameServerEndpoint %q: routes %v\n got %+v\nwant %+v", tc.endpoint, err, routes, tc.routes)
		}
		urls, err := tpl.FunctionURLs(refs)
		if err != nil || !reflect.DeepEqual(urls, tc.urls) {
			t.Errorf("GameServerEndpoint %q: function URLs %v\n got %+v\nwant %+v", tc.endpoint, err, urls, tc.urls)
		}
	}
}

func TestRepoTemplateSchedules(t *testing.T) {
	tpl, err := Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tpl.Schedules(map[string]string{"HealthSweepSchedule": "rate(5 minutes)"})
	want := []Schedule{
		{FunctionLogicalID: "PingRefreshFunction", EventName: "Refresh", Expression: "rate(1 minute)"},
		{FunctionLogicalID: "HealthSweepFunction", EventName: "Sweep", Expression: "rate(5 minutes)"},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Schedules = %+v, %v; want %+v", got, err, want)
	}
}

// TestRepoTemplateThrottlesUnauthenticatedRoutes pins the HTTP API guard
// rails: a default throttle for every route, and the tighter game-server
// throttle on every route that opts out of IAM auth (a function's event
// with Authorizer NONE, or a DefinitionBody operation with security NONE),
// so a route added without auth cannot silently escape it. Behind the
// function URL (GameServerEndpoint FunctionUrl) LinkBackFunction's reserved
// concurrency is the throttle.
func TestRepoTemplateThrottlesUnauthenticatedRoutes(t *testing.T) {
	tpl, err := Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	api := tpl.byID["HttpApi"]
	if api == nil {
		t.Fatal("no HttpApi resource")
	}
	def := lookup(api.props, "DefaultRouteSettings")
	if got := refTo(lookup(def, "ThrottlingBurstLimit")); got != "ApiThrottlingBurstLimit" {
		t.Errorf("HttpApi DefaultRouteSettings.ThrottlingBurstLimit refers to %q", got)
	}
	if got := refTo(lookup(def, "ThrottlingRateLimit")); got != "ApiThrottlingRateLimit" {
		t.Errorf("HttpApi DefaultRouteSettings.ThrottlingRateLimit refers to %q", got)
	}

	r := resolver{t: tpl, refs: map[string]string{"GameServerEndpoint": "HttpApi"}}
	open := unauthenticatedRoutes(t, r)
	settings, set, err := r.branch(lookup(api.props, "RouteSettings"), "RouteSettings")
	if err != nil || !set {
		t.Fatalf("HttpApi RouteSettings with GameServerEndpoint HttpApi: %v, set %v", err, set)
	}
	for _, route := range open {
		rs := lookup(settings, route)
		if got := refTo(lookup(rs, "ThrottlingBurstLimit")); got != "GameServerThrottlingBurstLimit" {
			t.Errorf("%s: unauthenticated route's RouteSettings.ThrottlingBurstLimit refers to %q", route, got)
		}
		if got := refTo(lookup(rs, "ThrottlingRateLimit")); got != "GameServerThrottlingRateLimit" {
			t.Errorf("%s: unauthenticated route's RouteSettings.ThrottlingRateLimit refers to %q", route, got)
		}
	}
	if want := []string{"POST /v1/game-instances/{gameInstanceId}/link", "POST /v1/game-instances/{gameInstanceId}/heartbeat",
		"POST /v1/game-instances/{gameInstanceId}/end"}; !reflect.DeepEqual(open, want) {
		t.Errorf("unauthenticated routes = %v, want %v", open, want)
	}

	r.refs = nil // FunctionUrl: no game-server routes, the URL's throttle
	if open := unauthenticatedRoutes(t, r); len(open) != 0 {
		t.Errorf("unauthenticated HTTP API routes with GameServerEndpoint FunctionUrl: %v", open)
	}
	if reserved, err := tpl.FunctionReservedConcurrency("LinkBackFunction", nil); err != nil || reserved != 100 {
		t.Errorf("LinkBackFunction's reserved concurrency = %d, %v; want LinkBackReservedConcurrency's 100", reserved, err)
	}
}

func refTo(n *yaml.Node) string {
	if name, arg, ok := intrinsic(n); ok && name == "Ref" && isPlainScalar(arg) {
		return arg.Value
	}
	return ""
}

// unauthenticatedRoutes are the route keys ("POST /path") that opt out of
// the HTTP API's IAM authorizer with r's refs.
func unauthenticatedRoutes(t *testing.T, r resolver) []string {
	t.Helper()
	var open []string
	err := r.eachEvent("HttpApi", func(fn, event string, props *yaml.Node) error {
		if authorizer := lookup(lookup(props, "Auth"), "Authorizer"); authorizer != nil && authorizer.Value == "NONE" {
			route, err := r.route(fn, event, props)
			open = append(open, route.Method+" "+route.Path)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = r.eachOperation(func(_, path, method string, op *yaml.Node) error {
		security, err := r.list(lookup(op, "security"), "security")
		if len(security) == 1 && lookup(security[0], "NONE") != nil {
			open = append(open, method+" "+path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return open
}

// TestRepoTemplateScheduledRunsAreNotRetried pins the scheduled functions'
// guard rails: one run at a time, no asynchronous retry into the next run,
// and somewhere for failed runs to go.
func TestRepoTemplateScheduledRunsAreNotRetried(t *testing.T) {
	tpl, err := Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	schedules, err := tpl.Schedules(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(schedules) == 0 {
		t.Fatal("no scheduled functions")
	}
	r := resolver{t: tpl}
	for _, s := range schedules {
		props := tpl.byID[s.FunctionLogicalID].props
		scalar := func(n *yaml.Node, what string) string {
			v, err := r.str(n, what)
			if err != nil {
				t.Errorf("%s: %v", s.FunctionLogicalID, err)
			}
			return v
		}
		if got := scalar(lookup(props, "ReservedConcurrentExecutions"), "ReservedConcurrentExecutions"); got != "1" {
			t.Errorf("%s: ReservedConcurrentExecutions = %q, want 1 (one run at a time)", s.FunctionLogicalID, got)
		}
		cfg := lookup(props, "EventInvokeConfig")
		if got := scalar(lookup(cfg, "MaximumRetryAttempts"), "MaximumRetryAttempts"); got != "0" {
			t.Errorf("%s: EventInvokeConfig.MaximumRetryAttempts = %q, want 0", s.FunctionLogicalID, got)
		}
		onFailure := lookup(lookup(cfg, "DestinationConfig"), "OnFailure")
		if lookup(onFailure, "Destination") == nil {
			t.Errorf("%s: EventInvokeConfig has no OnFailure destination", s.FunctionLogicalID)
		}
	}
}
