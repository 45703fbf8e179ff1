// Package app is the composition root: for each function it turns a loaded
// configuration and the AWS clients into the handler that main.go starts.
// functions/<name>/main.go, the bench and the tests build through it, so
// there is one wiring of each function, not a copy per caller.
package app

import (
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
	"github.com/gamefabric-alloc/allocsvc/shared/secrets"
	"github.com/gamefabric-alloc/allocsvc/shared/store"
)

// Clients are what the functions talk to. Build them once per cold start.
type Clients struct {
	DynamoDB *dynamodb.Client
	Secrets  secrets.SecretGetter
	// HTTP calls GameFabric.
	HTTP *http.Client
	// Metrics is where EMF metric lines go (stdout in Lambda).
	Metrics io.Writer
}

// NewClients builds the clients from an AWS configuration.
func NewClients(awsCfg aws.Config, metrics io.Writer) Clients {
	return Clients{DynamoDB: dynamodb.NewFromConfig(awsCfg), Secrets: secretsmanager.NewFromConfig(awsCfg),
		HTTP: &http.Client{}, Metrics: metrics}
}

// regionHealth is the breaker on DynamoDB, or the no-op one when region
// health is off (no table configured).
// The breaker is also returned on its own (nil when off) for the regions
// API, which leaves health out of its answer when it is off.
func regionHealth(db store.RegionHealthDB, c config.RegionHealth) (regionhealth.Regions, *regionhealth.Breaker) {
	if c.Table == "" {
		return regionhealth.Off{}, nil
	}
	p := regionhealth.BreakerPolicy{FailureThreshold: c.FailureThreshold, Cooldown: c.Cooldown, NoPingUnhealthyAfter: c.NoPingUnhealthyAfter}.WithDefaults()
	b := &regionhealth.Breaker{Store: store.NewRegionHealth(db, c.Table, p), Policy: p}
	return b, b
}
