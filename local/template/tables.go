package template

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"go.yaml.in/yaml/v3"
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

func (r resolver) table(res resource) (Table, error) {
	p := res.props
	if p == nil {
		return Table{}, fmt.Errorf("has no Properties")
	}
	gsis, err := r.list(lookup(p, "GlobalSecondaryIndexes"), "GlobalSecondaryIndexes")
	if err != nil {
		return Table{}, err
	}
	lsis, err := r.list(lookup(p, "LocalSecondaryIndexes"), "LocalSecondaryIndexes")
	if err != nil {
		return Table{}, err
	}
	stream, err := r.object(lookup(p, "StreamSpecification"), "StreamSpecification")
	if err != nil {
		return Table{}, err
	}
	ttl, err := r.object(lookup(p, "TimeToLiveSpecification"), "TimeToLiveSpecification")
	if err != nil {
		return Table{}, err
	}
	in := &dynamodb.CreateTableInput{}
	if in.AttributeDefinitions, err = r.attributeDefinitions(lookup(p, "AttributeDefinitions")); err != nil {
		return Table{}, err
	}
	if in.KeySchema, err = r.keySchema(lookup(p, "KeySchema"), "KeySchema"); err != nil {
		return Table{}, err
	}

	// CloudFormation's default billing mode is PROVISIONED.
	billing := string(types.BillingModeProvisioned)
	if n := lookup(p, "BillingMode"); n != nil {
		if billing, err = r.str(n, "BillingMode"); err != nil {
			return Table{}, err
		}
	}
	in.BillingMode = types.BillingMode(billing)
	provisioned := in.BillingMode == types.BillingModeProvisioned
	if in.ProvisionedThroughput, err = r.throughput(lookup(p, "ProvisionedThroughput"), "ProvisionedThroughput", provisioned); err != nil {
		return Table{}, err
	}

	if err := r.indexes(in, gsis, lsis, provisioned); err != nil {
		return Table{}, err
	}
	if stream != nil {
		view, err := r.str(lookup(stream, "StreamViewType"), "StreamSpecification.StreamViewType")
		if err != nil {
			return Table{}, err
		}
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewType(view)}
	}
	if err := checkKeysDefined(in); err != nil {
		return Table{}, err
	}

	tbl := Table{LogicalID: res.id, Input: in}
	tbl.TTLAttribute, err = r.ttlAttribute(ttl)
	return tbl, err
}

// indexes adds the table's global and local secondary indexes to in.
func (r resolver) indexes(in *dynamodb.CreateTableInput, gsis, lsis []*yaml.Node, provisioned bool) error {
	for i, n := range gsis {
		gsi, err := r.globalIndex(n, fmt.Sprintf("GlobalSecondaryIndexes[%d]", i), provisioned)
		if err != nil {
			return err
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, gsi)
	}
	for i, n := range lsis {
		lsi, err := r.localIndex(n, fmt.Sprintf("LocalSecondaryIndexes[%d]", i))
		if err != nil {
			return err
		}
		in.LocalSecondaryIndexes = append(in.LocalSecondaryIndexes, lsi)
	}
	return nil
}

// ttlAttribute is the TTL attribute of an enabled TimeToLiveSpecification
// ("" for none, or a disabled one).
func (r resolver) ttlAttribute(ttl *yaml.Node) (string, error) {
	if ttl == nil {
		return "", nil
	}
	enabled, err := r.boolean(lookup(ttl, "Enabled"), "TimeToLiveSpecification.Enabled")
	if err != nil || !enabled {
		return "", err
	}
	return r.str(lookup(ttl, "AttributeName"), "TimeToLiveSpecification.AttributeName")
}

func (r resolver) attributeDefinitions(n *yaml.Node) ([]types.AttributeDefinition, error) {
	items, err := r.list(n, "AttributeDefinitions")
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("AttributeDefinitions must be a non-empty list")
	}
	defs := make([]types.AttributeDefinition, 0, len(items))
	for i, item := range items {
		what := fmt.Sprintf("AttributeDefinitions[%d]", i)
		name, err := r.str(lookup(item, "AttributeName"), what+".AttributeName")
		if err != nil {
			return nil, err
		}
		typ, err := r.str(lookup(item, "AttributeType"), what+".AttributeType")
		if err != nil {
			return nil, err
		}
		defs = append(defs, types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: types.ScalarAttributeType(typ)})
	}
	return defs, nil
}

func (r resolver) keySchema(n *yaml.Node, what string) ([]types.KeySchemaElement, error) {
	items, err := r.list(n, what)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s must be a non-empty list", what)
	}
	keys := make([]types.KeySchemaElement, 0, len(items))
	for i, item := range items {
		w := fmt.Sprintf("%s[%d]", what, i)
		name, err := r.str(lookup(item, "AttributeName"), w+".AttributeName")
		if err != nil {
			return nil, err
		}
		typ, err := r.str(lookup(item, "KeyType"), w+".KeyType")
		if err != nil {
			return nil, err
		}
		keys = append(keys, types.KeySchemaElement{AttributeName: aws.String(name), KeyType: types.KeyType(typ)})
	}
	return keys, nil
}

// throughput reads a ProvisionedThroughput block; it is required exactly
// when the table is PROVISIONED, which CloudFormation also enforces.
func (r resolver) throughput(n *yaml.Node, what string, provisioned bool) (*types.ProvisionedThroughput, error) {
	n, err := r.object(n, what)
	if err != nil {
		return nil, err
	}
	if n == nil {
		if provisioned {
			return nil, fmt.Errorf("%s is required when BillingMode is PROVISIONED (the CloudFormation default)", what)
		}
		return nil, nil
	}
	if !provisioned {
		// DynamoDB rejects throughput on PAY_PER_REQUEST tables.
		return nil, nil
	}
	rcu, err := r.integer(lookup(n, "ReadCapacityUnits"), what+".ReadCapacityUnits")
	if err != nil {
		return nil, err
	}
	wcu, err := r.integer(lookup(n, "WriteCapacityUnits"), what+".WriteCapacityUnits")
	if err != nil {
		return nil, err
	}
	return &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(rcu), WriteCapacityUnits: aws.Int64(wcu)}, nil
}

func (r resolver) projection(n *yaml.Node, what string) (*types.Projection, error) {
	n, err := r.object(n, what)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, fmt.Errorf("%s is required", what)
	}
	typ, err := r.str(lookup(n, "ProjectionType"), what+".ProjectionType")
	if err != nil {
		return nil, err
	}
	p := &types.Projection{ProjectionType: types.ProjectionType(typ)}
	nonKey, err := r.list(lookup(n, "NonKeyAttributes"), what+".NonKeyAttributes")
	if err != nil {
		return nil, err
	}
	for i, a := range nonKey {
		name, err := r.str(a, fmt.Sprintf("%s.NonKeyAttributes[%d]", what, i))
		if err != nil {
			return nil, err
		}
		p.NonKeyAttributes = append(p.NonKeyAttributes, name)
	}
	return p, nil
}

func (r resolver) globalIndex(n *yaml.Node, what string, provisioned bool) (types.GlobalSecondaryIndex, error) {
	var gsi types.GlobalSecondaryIndex
	name, err := r.str(lookup(n, "IndexName"), what+".IndexName")
	if err != nil {
		return gsi, err
	}
	gsi.IndexName = aws.String(name)
	if gsi.KeySchema, err = r.keySchema(lookup(n, "KeySchema"), what+".KeySchema"); err != nil {
		return gsi, err
	}
	if gsi.Projection, err = r.projection(lookup(n, "Projection"), what+".Projection"); err != nil {
		return gsi, err
	}
	gsi.ProvisionedThroughput, err = r.throughput(lookup(n, "ProvisionedThroughput"), what+".ProvisionedThroughput", provisioned)
	return gsi, err
}

func (r resolver) localIndex(n *yaml.Node, what string) (types.LocalSecondaryIndex, error) {
	var lsi types.LocalSecondaryIndex
	name, err := r.str(lookup(n, "IndexName"), what+".IndexName")
	if err != nil {
		return lsi, err
	}
	lsi.IndexName = aws.String(name)
	if lsi.KeySchema, err = r.keySchema(lookup(n, "KeySchema"), what+".KeySchema"); err != nil {
		return lsi, err
	}
	lsi.Projection, err = r.projection(lookup(n, "Projection"), what+".Projection")
	return lsi, err
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
