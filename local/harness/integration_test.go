//go:build integration

package harness

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// startBoth starts DynamoDB Local and moto concurrently (each takes seconds)
// and fails, never skips, when either is missing: a skipped integration
// test reads as green in CI while testing nothing.
func startBoth(t *testing.T) (ddb, moto *Process) {
	t.Helper()
	ctx := context.Background()
	type started struct {
		p   *Process
		err error
	}
	ddbCh, motoCh := make(chan started, 1), make(chan started, 1)
	go func() { p, err := StartDynamoDBLocal(ctx); ddbCh <- started{p, err} }()
	go func() { p, err := StartMoto(ctx); motoCh <- started{p, err} }()
	d, m := <-ddbCh, <-motoCh
	for _, s := range []started{d, m} {
		if s.p != nil {
			p := s.p
			t.Cleanup(func() { _ = p.Stop() })
		}
	}
	// Report every missing component at once, not one per run.
	if d.err != nil {
		t.Errorf("DynamoDB Local is required for integration tests: %v", d.err)
	}
	if m.err != nil {
		t.Errorf("moto is required for integration tests: %v", m.err)
	}
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("startup: dynamodb-local %.2fs, moto %.2fs", d.p.StartupDuration.Seconds(), m.p.StartupDuration.Seconds())
	return d.p, m.p
}

func TestLocalServicesEndToEnd(t *testing.T) {
	ddbProc, motoProc := startBoth(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := AWSConfig()

	db := NewDynamoDB(cfg, ddbProc.Endpoint)
	table := "harness-smoke"
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	_, err = db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(table),
		Item: map[string]types.AttributeValue{
			"id":    &types.AttributeValueMemberS{Value: "gi-1"},
			"state": &types.AttributeValueMemberS{Value: "allocated"},
		},
	})
	if err != nil {
		t.Fatalf("PutItem: %v", err)
	}
	got, err := db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(table),
		Key:            map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "gi-1"}},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatalf("GetItem: %v", err)
	}
	if s, ok := got.Item["state"].(*types.AttributeValueMemberS); !ok || s.Value != "allocated" {
		t.Fatalf("GetItem returned %#v", got.Item)
	}

	sm := NewSecretsManager(cfg, motoProc.Endpoint)
	_, err = sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{
		Name:         aws.String("allocsvc/test"),
		SecretString: aws.String(`{"apiKey":"k-123"}`),
	})
	if err != nil {
		t.Fatalf("CreateSecret: %v", err)
	}
	sec, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("allocsvc/test")})
	if err != nil {
		t.Fatalf("GetSecretValue: %v", err)
	}
	if aws.ToString(sec.SecretString) != `{"apiKey":"k-123"}` {
		t.Fatalf("secret = %q", aws.ToString(sec.SecretString))
	}

	for _, p := range []*Process{ddbProc, motoProc} {
		if err := p.Stop(); err != nil {
			t.Fatalf("stopping %s: %v", p.Name, err)
		}
		if err := p.Stop(); err != nil {
			t.Fatalf("second Stop of %s: %v", p.Name, err)
		}
		assertPortClosed(t, p.Port)
	}
}

func assertPortClosed(t *testing.T, port int) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err == nil {
		conn.Close()
		t.Fatalf("port %d still accepts connections after Stop", port)
	}
}
