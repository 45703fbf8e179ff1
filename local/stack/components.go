package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path"
	"path/filepath"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/template"
)

// Paths the emulator serves, as a GameFabric installation would.
const (
	AllocatePath = "allocator/local/allocate"
	RegistryPath = "allocator/local/servers"
	PingPath     = "ping"
)

// Components are the stateful pieces: AWS stand-ins and the emulator.
type Components struct {
	DynamoDB, SecretsManager string // endpoints
	SecretARN                string
	Tables                   map[string]string // logical ID → table name
	EmulatorURL              string
	Emulator                 *gfemu.Emulator
	Template                 *template.Template

	closers []func() error
}

// StartComponents starts DynamoDB Local and moto, creates the template's
// tables and the allocator token secret, and serves the GameFabric emulator.
func StartComponents(ctx context.Context, cfg Config, root string) (c *Components, err error) {
	c = &Components{}
	defer func() {
		if err != nil {
			_ = c.Close()
		}
	}()
	if c.Template, err = template.Load(filepath.Join(root, "template.yaml")); err != nil {
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
	c.DynamoDB, c.SecretsManager = ddb.Endpoint, moto.Endpoint

	tables, err := c.Template.Tables()
	if err != nil {
		return c, err
	}
	c.Tables = map[string]string{}
	for _, t := range tables {
		c.Tables[t.LogicalID] = t.LogicalID
	}
	awsCfg := harness.AWSConfig()
	if err := template.CreateTables(ctx, harness.NewDynamoDB(awsCfg, c.DynamoDB), c.Template, c.Tables); err != nil {
		return c, fmt.Errorf("create tables from template.yaml: %w", err)
	}
	secret, _ := json.Marshal(map[string][]string{"tokens": cfg.GameFabric.AllocatorTokens})
	out, err := harness.NewSecretsManager(awsCfg, c.SecretsManager).CreateSecret(ctx, &secretsmanager.CreateSecretInput{
		Name: aws.String("gamefabric/allocator-token"), SecretString: aws.String(string(secret))})
	if err != nil {
		return c, fmt.Errorf("create the allocator token secret: %w", err)
	}
	c.SecretARN = *out.ARN

	c.Emulator = gfemu.New(gfemu.Config{
		Prefix:          "/" + path.Dir(AllocatePath),
		AllocatorTokens: cfg.GameFabric.AllocatorTokens,
		RegistryTokens:  cfg.GameFabric.RegistryTokens,
		QPS:             cfg.GameFabric.QPS,
		Burst:           cfg.GameFabric.Burst,
		CallbackTimeout: cfg.GameFabric.CallbackTimeout,
	})
	url, stop, err := serve(cfg.GameFabric.Port, c.Emulator.Handler())
	if err != nil {
		return c, fmt.Errorf("GameFabric emulator: %w", err)
	}
	c.EmulatorURL = url
	c.closers = append(c.closers, stop)
	return c, nil
}

// Refs are the deploy-time values of template.yaml's references, locally.
func (c *Components) Refs(cfg Config, apiURL string) map[string]string {
	refs := map[string]string{
		"GameFabricUrl":           c.EmulatorURL,
		"GameFabricAllocatePath":  AllocatePath,
		"GameFabricPingPath":      PingPath,
		"AllocatorTokenSecretArn": c.SecretARN,
		"PingTokenSecretArn":      c.SecretARN, // the emulator's ping takes the allocator tokens
		"BackendAddress":          apiURL,
	}
	for k, v := range cfg.Parameters {
		refs[k] = v
	}
	for logical, name := range c.Tables {
		refs[logical] = name
	}
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
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_EC2_METADATA_DISABLED=true",
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env, nil
}

// Close stops everything started, last first.
func (c *Components) Close() error {
	var errs []error
	for i := len(c.closers) - 1; i >= 0; i-- {
		errs = append(errs, c.closers[i]())
	}
	c.closers = nil
	return errors.Join(errs...)
}

// serve runs h on 127.0.0.1:port (0 = any free port).
func serve(port int, h http.Handler) (string, func() error, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), srv.Close, nil
}

// LoadTemplate reads root/template.yaml.
func LoadTemplate(root string) (*template.Template, error) {
	return template.Load(filepath.Join(root, "template.yaml"))
}
