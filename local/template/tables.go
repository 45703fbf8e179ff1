package template

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Table is an AWS::DynamoDB::Table resource translated to the CreateTable
// call that reproduces it locally.
type Table struct {
	LogicalID string
	// Input has TableName unset: deployed names are generated per stack, so
	// callers choose local names (see CreateTables).
	Input *dynamodb.CreateTableInput
	// TTLAttribute is the enabled TimeToLiveSpecification attribute, or "".
	TTLAttribute string
}

// Tables returns every AWS::DynamoDB::Table in template order. Properties
// without a local meaning (SSE, point-in-time recovery, tags, deletion
// protection, table class, ...) are ignored; key schema, attributes,
// indexes, billing, streams and TTL are translated.
func (t *Template) Tables() ([]Table, error) {
	r := resolver{t: t}
	return each(r, TypeDynamoDBTable, "table", r.table)
}

// tableProperties are the properties of a table that are translated.
type tableProperties struct {
	AttributeDefinitions    []types.AttributeDefinition
	KeySchema               []types.KeySchemaElement
	BillingMode             types.BillingMode
	ProvisionedThroughput   *types.ProvisionedThroughput
	GlobalSecondaryIndexes  []types.GlobalSecondaryIndex
	LocalSecondaryIndexes   []types.LocalSecondaryIndex
	StreamSpecification     *types.StreamSpecification
	TimeToLiveSpecification *struct {
		AttributeName string
		Enabled       bool
	}
}

func (r resolver) table(res *resource) (Table, error) {
	if res.props == nil {
		return Table{}, fmt.Errorf("has no Properties")
	}
	// CloudFormation's default billing mode is PROVISIONED.
	p := tableProperties{BillingMode: types.BillingModeProvisioned}
	if err := r.decode(res.props, "", &p); err != nil {
		return Table{}, err
	}
	provisioned := p.BillingMode == types.BillingModeProvisioned
	in := &dynamodb.CreateTableInput{AttributeDefinitions: p.AttributeDefinitions, KeySchema: p.KeySchema, BillingMode: p.BillingMode,
		GlobalSecondaryIndexes: p.GlobalSecondaryIndexes, LocalSecondaryIndexes: p.LocalSecondaryIndexes, StreamSpecification: p.StreamSpecification}
	var err error
	if in.ProvisionedThroughput, err = throughput(p.ProvisionedThroughput, "ProvisionedThroughput", provisioned); err != nil {
		return Table{}, err
	}
	for i := range in.GlobalSecondaryIndexes {
		gsi := &in.GlobalSecondaryIndexes[i]
		what := fmt.Sprintf("GlobalSecondaryIndexes[%d].ProvisionedThroughput", i)
		if gsi.ProvisionedThroughput, err = throughput(gsi.ProvisionedThroughput, what, provisioned); err != nil {
			return Table{}, err
		}
	}
	if in.StreamSpecification != nil {
		in.StreamSpecification.StreamEnabled = aws.Bool(true)
	}
	if err := checkKeysDefined(in); err != nil {
		return Table{}, err
	}
	tbl := Table{LogicalID: res.id, Input: in}
	if ttl := p.TimeToLiveSpecification; ttl != nil && ttl.Enabled {
		tbl.TTLAttribute = ttl.AttributeName
	}
	return tbl, nil
}

// throughput checks a ProvisionedThroughput block: it is required exactly
// when the table is PROVISIONED, which CloudFormation also enforces, and
// DynamoDB rejects it on PAY_PER_REQUEST tables.
func throughput(t *types.ProvisionedThroughput, what string, provisioned bool) (*types.ProvisionedThroughput, error) {
	switch {
	case !provisioned:
		return nil, nil
	case t == nil:
		return nil, fmt.Errorf("%s is required when BillingMode is PROVISIONED (the CloudFormation default)", what)
	}
	return t, nil
}

// checkKeysDefined catches the most common template mistake, a key with no
// AttributeDefinitions entry, with a clearer message than DynamoDB's.
func checkKeysDefined(in *dynamodb.CreateTableInput) error {
	type schema struct {
		of   string
		keys []types.KeySchemaElement
	}
	schemas := []schema{{"KeySchema", in.KeySchema}}
	for _, g := range in.GlobalSecondaryIndexes {
		schemas = append(schemas, schema{"index " + aws.ToString(g.IndexName), g.KeySchema})
	}
	for _, l := range in.LocalSecondaryIndexes {
		schemas = append(schemas, schema{"index " + aws.ToString(l.IndexName), l.KeySchema})
	}
	for _, sc := range schemas {
		for _, k := range sc.keys {
			name := aws.ToString(k.AttributeName)
			defined := func(d types.AttributeDefinition) bool { return aws.ToString(d.AttributeName) == name }
			if !slices.ContainsFunc(in.AttributeDefinitions, defined) {
				return fmt.Errorf("%s key %q has no AttributeDefinitions entry", sc.of, name)
			}
		}
	}
	return nil
}

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
