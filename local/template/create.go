package template

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DynamoDBAPI is the subset of *dynamodb.Client that CreateTables uses.
type DynamoDBAPI interface {
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
}

// tableActiveTimeout bounds the wait for one table; DynamoDB Local is
// instant, real DynamoDB takes seconds.
const tableActiveTimeout = 2 * time.Minute

// CreateTables creates every table of t under the name names[logicalID],
// waits until each is ACTIVE and enables its TTL attribute, if any. Every
// table must have a name, checked before anything is created.
func CreateTables(ctx context.Context, client DynamoDBAPI, t *Template, names map[string]string) error {
	tables, err := t.Tables()
	if err != nil {
		return err
	}
	var missing []string
	for _, tbl := range tables {
		if names[tbl.LogicalID] == "" {
			missing = append(missing, tbl.LogicalID)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("no local table name for %s", strings.Join(missing, ", "))
	}
	for _, tbl := range tables {
		if err := createTable(ctx, client, tbl, names[tbl.LogicalID]); err != nil {
			return err
		}
	}
	return nil
}

func createTable(ctx context.Context, client DynamoDBAPI, tbl Table, name string) error {
	in := *tbl.Input
	in.TableName = aws.String(name)
	if _, err := client.CreateTable(ctx, &in); err != nil {
		return fmt.Errorf("creating table %s (%s): %w", name, tbl.LogicalID, err)
	}
	waiter := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		// The default 20 s first delay would dominate every local test run.
		o.MinDelay = 50 * time.Millisecond
		o.MaxDelay = 2 * time.Second
	})
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: in.TableName}, tableActiveTimeout); err != nil {
		return fmt.Errorf("waiting for table %s (%s) to become ACTIVE: %w", name, tbl.LogicalID, err)
	}
	if tbl.TTLAttribute == "" {
		return nil
	}
	_, err := client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: in.TableName,
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(tbl.TTLAttribute),
			Enabled:       aws.Bool(true),
		},
	})
	if err != nil {
		return fmt.Errorf("enabling TTL on %s.%s (%s): %w", name, tbl.TTLAttribute, tbl.LogicalID, err)
	}
	return nil
}
