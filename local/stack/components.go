package stack

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

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

	closers []func() error
}

// StartComponents starts DynamoDB Local and moto, creates the template's
// tables, and serves the emulated Allocators and Ping Service with their
// token secrets.
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
	if err := c.startGameFabric(ctx, cfg.GameFabric, harness.NewSecretsManager(awsCfg, c.SecretsManager)); err != nil {
		return c, err
	}
	return c, nil
}

// Refs are the deploy-time values of template.yaml's references, locally.
// Values for parameters template.yaml does not declare are ignored by it.
func (c *Components) Refs(cfg Config, apiURL string) map[string]string {
	refs := c.gameFabricRefs()
	refs["BackendAddress"] = apiURL
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

// LoadTemplate reads root/template.yaml.
func LoadTemplate(root string) (*template.Template, error) {
	return template.Load(filepath.Join(root, "template.yaml"))
}
