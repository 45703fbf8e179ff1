package template

import (
	"fmt"

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
	var tables []Table
	r := resolver{t: t}
	for _, res := range t.resources {
		if res.typ != TypeDynamoDBTable {
			continue
		}
		tbl, err := r.table(res)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", res.id, err)
		}
		tables = append(tables, tbl)
	}
	return tables, nil
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

func (r resolver) table(res resource) (Table, error) {
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
	defined := map[string]bool{}
	for _, d := range in.AttributeDefinitions {
		defined[aws.ToString(d.AttributeName)] = true
	}
	check := func(where string, keys []types.KeySchemaElement) error {
		for _, k := range keys {
			if !defined[aws.ToString(k.AttributeName)] {
				return fmt.Errorf("%s key %q has no AttributeDefinitions entry", where, aws.ToString(k.AttributeName))
			}
		}
		return nil
	}
	if err := check("KeySchema", in.KeySchema); err != nil {
		return err
	}
	for _, g := range in.GlobalSecondaryIndexes {
		if err := check("index "+aws.ToString(g.IndexName), g.KeySchema); err != nil {
			return err
		}
	}
	for _, l := range in.LocalSecondaryIndexes {
		if err := check("index "+aws.ToString(l.IndexName), l.KeySchema); err != nil {
			return err
		}
	}
	return nil
}
