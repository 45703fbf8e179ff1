package stack

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/gamelift"
	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/template"
)

// Components are the stateful pieces: AWS stand-ins and emulated GameFabric.
type Components struct {
	DynamoDB, SecretsManager string            // endpoints
	Tables                   map[string]string // logical ID → table name
	Template                 *template.Template
	// Allocators in dev.yaml's order; the first also serves every Region
	// no Allocator lists.
	Allocators []*Allocator
	Ping       *PingService
	// Agones is the emulated Agones cluster; nil without one.
	Agones *Agones
	// Moto is moto's endpoint: Secrets Manager, SQS and EventBridge.
	Moto              string
	Queues, QueueARNs map[string]string // the template's SQS queues in moto: logical ID → URL, ARN
	EventBuses        map[string]string // the template's buses in moto: logical ID → name
	Streams           map[string]string // the tables' streams: logical ID → ARN
	// GameLift is the stand-in for GameLift's DescribeMatchmaking, served on
	// GameLiftURL: tests and PutMatch put tickets in it.
	GameLift    *gamelift.StandIn
	GameLiftURL string
	// Secrets are the template's generated secrets, by logical ID.
	Secrets map[string]GeneratedSecret
	// Rules are the EventBridge rules StartRules created, as evaluated.
	Rules []template.EventRule
	// EventsTapURL is the queue of every event of EventsSource published on
	// GameServerEventBus (ReadTap); "" without that bus.
	EventsTapURL string
	eventsLogURL string    // the tap's twin the stack prints (WatchEvents)
	events       eventRing // what WatchEvents printed, for RecentEvents

	closers []func() error
}

// StartComponents starts DynamoDB Local and moto, creates the template's
// tables, SQS queues, EventBridge buses and generated secrets, and serves
// the emulated Allocators and Ping Service with their token secrets, and
// the GameLift stand-in.
func StartComponents(ctx context.Context, cfg Config, root string) (c *Components, err error) {
	c = &Components{}
	defer func() {
		if err != nil {
			_ = c.Close()
		}
	}()
	if c.Template, err = LoadTemplate(root); err != nil {
		return c, err
	}
	ddb, err := harness.StartDynamoDBLocal(ctx)
	if err != nil {
		return c, fmt.Errorf("DynamoDB Local: %w", err)
	}
	c.closers = append(c.closers, ddb.Stop)
	moto, err := harness.StartMoto(ctx)
	if err != nil {
		return c, fmt.Errorf("moto_server (Secrets Manager): %w", err)
	}
	c.closers = append(c.closers, moto.Stop)
	c.DynamoDB, c.SecretsManager, c.Moto = ddb.Endpoint, moto.Endpoint, moto.Endpoint
	c.Tables = map[string]string{}
	for _, id := range c.Template.LogicalIDs(template.TypeDynamoDBTable) {
		c.Tables[id] = id
	}
	awsCfg := harness.AWSConfig()
	if err := template.CreateTables(ctx, harness.NewDynamoDB(awsCfg, c.DynamoDB), c.Template, c.Tables); err != nil {
		return c, fmt.Errorf("create tables from template.yaml: %w", err)
	}
	if err := c.startEventing(ctx); err != nil {
		return c, err
	}
	sm := harness.NewSecretsManager(awsCfg, c.SecretsManager)
	if err := c.startGameFabric(ctx, cfg.GameFabric, sm); err != nil {
		return c, err
	}
	if err := c.createSecrets(ctx, cfg.Parameters, sm); err != nil {
		return c, err
	}
	if err := c.startAgones(ctx, cfg, sm); err != nil {
		return c, fmt.Errorf("Agones allocator: %w", err)
	}
	c.GameLift = gamelift.New()
	if c.GameLiftURL, err = c.serve(0, c.GameLift); err != nil {
		return c, fmt.Errorf("GameLift stand-in: %w", err)
	}
	return c, nil
}

// Refs are the deploy-time values of template.yaml's references, locally
// (the template ignores those of parameters it does not declare). With
// GameServerEndpoint HttpApi, BackendAddress is apiURL, as an operator
// passes the API's URL (a Rule of the template requires it: the functions
// cannot refer to the API that invokes them). A function URL's FunctionUrl
// is the address make dev serves it on; Start puts the address it really
// listens on in its place.
func (c *Components) Refs(cfg Config, apiURL string) map[string]string {
	refs := c.gameFabricRefs()
	if cfg.Parameters[GameServerEndpoint] == GameServerHTTPAPI {
		refs["BackendAddress"] = apiURL
	}
	maps.Copy(refs, cfg.Parameters)
	maps.Copy(refs, c.Tables)
	for id, s := range c.Secrets {
		refs[id] = s.ARN // Ref of a secret is its ARN
	}
	c.eventRefs(refs)
	c.functionURLRefs(cfg.FunctionURLs.Port, refs)
	return refs
}

// FunctionEnv is a function's environment from template.yaml, pointed at
// the local components, with dummy credentials.
func (c *Components) FunctionEnv(logicalID string, refs map[string]string) ([]string, error) {
	vars, err := c.Template.FunctionEnv(logicalID, refs)
	if err != nil {
		return nil, err
	}
	env := []string{
		"AWS_ENDPOINT_URL_DYNAMODB=" + c.DynamoDB,
		"AWS_ENDPOINT_URL_SECRETS_MANAGER=" + c.SecretsManager,
		"AWS_ENDPOINT_URL_EVENTBRIDGE=" + c.Moto,
		"AWS_ENDPOINT_URL_SQS=" + c.Moto,
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_EC2_METADATA_DISABLED=true",
	}
	if c.GameLiftURL != "" {
		env = append(env, "AWS_ENDPOINT_URL_GAMELIFT="+c.GameLiftURL)
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env, nil
}

// Close stops everything started, last first.
func (c *Components) Close() error { return closeAll(&c.closers) }

func closeAll(closers *[]func() error) error {
	var errs []error
	for _, close := range slices.Backward(*closers) {
		errs = append(errs, close())
	}
	*closers = nil
	return errors.Join(errs...)
}

// LoadTemplate reads root/template.yaml.
func LoadTemplate(root string) (*template.Template, error) {
	return template.Load(filepath.Join(root, "template.yaml"))
}

// listen opens 127.0.0.1:port (0: any free port).
func listen(port int) (net.Listener, error) {
	return net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
}

// serve serves h on 127.0.0.1:port until Close, and returns its URL.
func (c *Components) serve(port int, h http.Handler) (string, error) {
	ln, err := listen(port)
	if err != nil {
		return "", err
	}
	c.closers = append(c.closers, serveOn(ln, h))
	return "http://" + ln.Addr().String(), nil
}

// serveOn serves h on ln; the function returned stops it.
func serveOn(ln net.Listener, h http.Handler) func() error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return srv.Close
}
