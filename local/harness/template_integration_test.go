//go:build integration

package harness

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/local/template"
)

// TestRepoTemplateTablesOnDynamoDBLocal proves the deployed template's
// tables can be recreated locally exactly as local tooling will do it.
func TestRepoTemplateTablesOnDynamoDBLocal(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := template.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ddb, err := StartDynamoDBLocal(context.Background())
	if err != nil {
		t.Fatalf("DynamoDB Local is required for integration tests: %v", err)
	}
	t.Cleanup(func() { _ = ddb.Stop() })

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db := NewDynamoDB(AWSConfig(), ddb.Endpoint)
	names := map[string]string{}
	for _, id := range tpl.LogicalIDs(template.TypeDynamoDBTable) {
		names[id] = "local-" + id
	}
	if err := template.CreateTables(ctx, db, tpl, names); err != nil {
		t.Fatalf("CreateTables: %v", err)
	}

	desc, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("local-GameInstancesTable")})
	if err != nil {
		t.Fatalf("DescribeTable: %v", err)
	}
	tbl := desc.Table
	if tbl.TableStatus != types.TableStatusActive || len(tbl.KeySchema) != 1 ||
		aws.ToString(tbl.KeySchema[0].AttributeName) != "gameInstanceId" {
		t.Fatalf("table %+v", tbl)
	}
	if tbl.BillingModeSummary == nil || tbl.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
		t.Errorf("billing %+v", tbl.BillingModeSummary)
	}
	ttl, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String("local-GameInstancesTable")})
	if err != nil {
		t.Fatalf("DescribeTimeToLive: %v", err)
	}
	if d := ttl.TimeToLiveDescription; d == nil || d.TimeToLiveStatus != types.TimeToLiveStatusEnabled ||
		aws.ToString(d.AttributeName) != "expiresAt" {
		t.Fatalf("TTL %+v", d)
	}
}
