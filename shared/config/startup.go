package config

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// Must returns c, or prints err and exits. Only for cold start in main:
// exiting there is how a Lambda reports an init error.
func Must[C any](c C, err error) C {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return c
}

// AWS loads the SDK's configuration (credentials, region, endpoint
// overrides such as AWS_ENDPOINT_URL_DYNAMODB) with the SDK's own log lines
// going through log as JSON. It exits on failure; only for main.
func AWS(log *slog.Logger) aws.Config {
	cfg, err := awsconfig.LoadDefaultConfig(context.Background(), awsconfig.WithLogger(logging.SDKLogger(log)))
	if err != nil {
		log.Error("load AWS configuration", "error", err)
		os.Exit(1)
	}
	return cfg
}
