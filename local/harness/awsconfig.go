package harness

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// Region is the region every local client uses; the local services accept
// any, but a fixed one keeps ARNs in test output predictable.
const Region = "us-east-1"

// AWSConfig returns a config for talking to local services only. It is built
// by hand rather than with config.LoadDefaultConfig so a developer's real
// profile, credentials or AWS_ENDPOINT_URL can never leak into tests.
func AWSConfig() aws.Config {
	return aws.Config{Region: Region, Credentials: credentials.NewStaticCredentialsProvider("AKIDLOCALHARNESS", "local-harness-secret", "")}
}

// NewDynamoDB returns a DynamoDB client that sends every request to endpoint
// (typically a Process.Endpoint from StartDynamoDBLocal).
func NewDynamoDB(cfg aws.Config, endpoint string) *dynamodb.Client {
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
	})
}

// NewSecretsManager returns a Secrets Manager client that sends every request
// to endpoint (typically a Process.Endpoint from StartMoto).
func NewSecretsManager(cfg aws.Config, endpoint string) *secretsmanager.Client {
	return secretsmanager.NewFromConfig(cfg, func(o *secretsmanager.Options) {
		o.BaseEndpoint = aws.String(endpoint)
	})
}
