package config

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

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

// AWS builds the SDK configuration from the Lambda environment: region
// from AWS_REGION, the execution role's credentials from AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, and endpoint overrides from
// AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE> (e.g.
// AWS_ENDPOINT_URL_DYNAMODB), with the SDK's own log lines going through log
// as JSON. It does not use the SDK's config package: in Lambda that resolves
// to exactly these variables, and linking it (with its SSO, STS and profile
// machinery) costs every cold start milliseconds of package initialisation
// (docs/benchmarks.md). It exits when something is missing; only for main.
func AWS(log *slog.Logger) aws.Config {
	cfg, err := awsFromEnv(os.Getenv)
	if err != nil {
		log.Error("load AWS configuration", "error", err)
		os.Exit(1)
	}
	cfg.Logger = logging.SDKLogger(log)
	return cfg
}

func awsFromEnv(getenv func(string) string) (aws.Config, error) {
	region := cmp.Or(getenv("AWS_REGION"), getenv("AWS_DEFAULT_REGION"))
	key, secret := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
	var missing []string
	if region == "" {
		missing = append(missing, "AWS_REGION")
	}
	if key == "" || secret == "" {
		missing = append(missing, "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	if len(missing) > 0 {
		return aws.Config{}, fmt.Errorf("%s not set: Lambda sets them for the execution role; set them when running a function elsewhere",
			strings.Join(missing, ", "))
	}
	cfg := aws.Config{
		Region:        region,
		Credentials:   credentials.NewStaticCredentialsProvider(key, secret, getenv("AWS_SESSION_TOKEN")),
		ConfigSources: []any{envEndpoints(getenv)},
	}
	if u := getenv("AWS_ENDPOINT_URL"); u != "" {
		cfg.BaseEndpoint = aws.String(u)
	}
	return cfg, nil
}

// envEndpoints answers the SDK clients' question for a service-specific
// endpoint (AWS_ENDPOINT_URL_<SDK ID>, spaces as underscores, upper case).
type envEndpoints func(string) string

func (e envEndpoints) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	name := "AWS_ENDPOINT_URL_" + strings.ToUpper(strings.ReplaceAll(sdkID, " ", "_"))
	v := e(name)
	return v, v != "", nil
}
