//go:build integration

package template

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
)

// TestSampleTablesOnDynamoDBLocal checks that the translated inputs
// (GSI projection, provisioned throughput, streams, TTL) are accepted by a
// real DynamoDB implementation, not just by the unit tests' expectations.
func TestSampleTablesOnDynamoDBLocal(t *testing.T) {
	ddb, err := harness.StartDynamoDBLocal(context.Background())
	if err != nil {
		t.Fatalf("DynamoDB Local is required for integration tests: %v", err)
	}
	t.Cleanup(func() { _ = ddb.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	db := harness.NewDynamoDB(harness.AWSConfig(), ddb.Endpoint)
	tpl := mustParse(t, sample)
	if err := CreateTables(ctx, db, tpl, map[string]string{"Sessions": "sessions", "Ledger": "ledger"}); err != nil {
		t.Fatalf("CreateTables: %v", err)
	}
	desc, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("sessions")})
	if err != nil {
		t.Fatalf("DescribeTable: %v", err)
	}
	if len(desc.Table.GlobalSecondaryIndexes) != 1 || aws.ToString(desc.Table.GlobalSecondaryIndexes[0].IndexName) != "byPlayer" {
		t.Fatalf("GSIs %+v", desc.Table.GlobalSecondaryIndexes)
	}
	ttl, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String("sessions")})
	if err != nil || ttl.TimeToLiveDescription.TimeToLiveStatus != types.TimeToLiveStatusEnabled {
		t.Fatalf("TTL %+v, %v", ttl, err)
	}
	// Creating the same tables again must fail loudly, not be skipped.
	if err := CreateTables(ctx, db, tpl, map[string]string{"Sessions": "sessions", "Ledger": "ledger"}); err == nil {
		t.Fatal("second CreateTables succeeded")
	}
}
