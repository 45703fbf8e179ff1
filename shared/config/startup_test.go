package config

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

func TestAWSFromEnv(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	lambdaEnv := map[string]string{"AWS_REGION": "eu-central-1", "AWS_ACCESS_KEY_ID": "AKIA", "AWS_SECRET_ACCESS_KEY": "s", "AWS_SESSION_TOKEN": "t",
		"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:8000", "AWS_ENDPOINT_URL_SECRETS_MANAGER": "http://127.0.0.1:5000"}

	cfg, err := awsFromEnv(env(lambdaEnv))
	if err != nil {
		t.Fatal(err)
	}
	creds, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil || cfg.Region != "eu-central-1" || creds.AccessKeyID != "AKIA" || creds.SessionToken != "t" {
		t.Fatalf("region %q creds %+v, %v", cfg.Region, creds, err)
	}
	// The service clients find their own override, as with the SDK's loader.
	if got := dynamodb.NewFromConfig(cfg).Options().BaseEndpoint; got == nil || *got != "http://127.0.0.1:8000" {
		t.Fatalf("DynamoDB endpoint = %v", got)
	}
	if got := secretsmanager.NewFromConfig(cfg).Options().BaseEndpoint; got == nil || *got != "http://127.0.0.1:5000" {
		t.Fatalf("Secrets Manager endpoint = %v", got)
	}

	cfg, _ = awsFromEnv(env(map[string]string{"AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "s"}))
	if cfg.Region != "us-east-1" || dynamodb.NewFromConfig(cfg).Options().BaseEndpoint != nil {
		t.Fatalf("defaults: region %q endpoint %v", cfg.Region, dynamodb.NewFromConfig(cfg).Options().BaseEndpoint)
	}

	_, err = awsFromEnv(env(map[string]string{}))
	if err == nil || !strings.Contains(err.Error(), "AWS_REGION") || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Fatalf("err = %v, want both problems named", err)
	}
}
