//go:build integration

// Package tests holds the integration and end-to-end tests: the real
// DynamoDB Local jar, moto's Secrets Manager, a GameFabric stand-in on
// loopback, and the built bootstrap binaries driven through the Lambda
// Runtime API. Run them with `make test`.
package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	localstack "github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/local/template"
)

// stack is what every test shares: started once, stopped at the end.
var stack struct {
	ddbEndpoint, smEndpoint string
	ddb                     *dynamodb.Client
	sm                      *secretsmanager.Client
	template                *template.Template
	repoRoot                string
	bootstraps              string // dir with one built bootstrap per function
}

func TestMain(m *testing.M) {
	code, err := setUp(m)
	if err != nil {
		// Never skip: a missing component is a failure that says what to install.
		fmt.Fprintf(os.Stderr, "FAIL: integration test setup: %v\n", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func setUp(m *testing.M) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root, err := harness.RepoRoot()
	if err != nil {
		return 0, err
	}
	stack.repoRoot = root
	if stack.template, err = template.Load(filepath.Join(root, "template.yaml")); err != nil {
		return 0, err
	}

	ddb, err := harness.StartDynamoDBLocal(ctx)
	if err != nil {
		return 0, fmt.Errorf("DynamoDB Local: %w", err)
	}
	defer ddb.Stop()
	moto, err := harness.StartMoto(ctx)
	if err != nil {
		return 0, fmt.Errorf("moto_server (Secrets Manager): %w", err)
	}
	defer moto.Stop()
	fmt.Fprintf(os.Stderr, "DynamoDB Local ready in %s, moto in %s\n", ddb.StartupDuration.Round(time.Millisecond), moto.StartupDuration.Round(time.Millisecond))

	cfg := harness.AWSConfig()
	stack.ddbEndpoint, stack.smEndpoint = ddb.Endpoint, moto.Endpoint
	stack.ddb, stack.sm = harness.NewDynamoDB(cfg, ddb.Endpoint), harness.NewSecretsManager(cfg, moto.Endpoint)

	dir, err := os.MkdirTemp("", "bootstraps-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	if err := buildBootstraps(ctx, root, dir); err != nil {
		return 0, err
	}
	stack.bootstraps = dir
	return m.Run(), nil
}

// buildBootstraps builds every function the way `make build` does, but for
// this machine's architecture so the binaries can run here.
func buildBootstraps(ctx context.Context, root, out string) error {
	fns, err := os.ReadDir(filepath.Join(root, "functions"))
	if err != nil {
		return err
	}
	var pkgs []string
	for _, fn := range fns {
		if fn.IsDir() {
			pkgs = append(pkgs, "functions/"+fn.Name())
		}
	}
	_, err = localstack.Build(ctx, root, out, pkgs...)
	return err
}

func bootstrap(t *testing.T, function string) string {
	t.Helper()
	p := filepath.Join(stack.bootstraps, function, "bootstrap")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("bootstrap for %s was not built: %v", function, err)
	}
	return p
}
