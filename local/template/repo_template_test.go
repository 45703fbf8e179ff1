package template

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestRepoTemplate pins what local tooling derives from the deployed
// template.yaml, so a template change that would silently alter local
// tables or routes shows up here first.
func TestRepoTemplate(t *testing.T) {
	tpl, err := Load("../../template.yaml")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}

	tables, err := tpl.Tables()
	if err != nil {
		t.Fatalf("Tables: %v", err)
	}
	if len(tables) != 1 || tables[0].LogicalID != "GameInstancesTable" {
		t.Fatalf("tables = %+v, want just GameInstancesTable", tables)
	}
	want := &dynamodb.CreateTableInput{
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("gameInstanceId"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("gameInstanceId"), KeyType: types.KeyTypeHash}},
	}
	if !reflect.DeepEqual(tables[0].Input, want) {
		t.Errorf("GameInstancesTable input:\n got %+v\nwant %+v", tables[0].Input, want)
	}
	if tables[0].TTLAttribute != "expiresAt" {
		t.Errorf("TTL attribute = %q, want expiresAt", tables[0].TTLAttribute)
	}

	wantRoutes := []Route{
		{FunctionLogicalID: "AllocateFunction", EventName: "Allocate", Method: "POST", Path: "/v1/allocations", PayloadFormatVersion: "2.0"},
		{FunctionLogicalID: "AllocateFunction", EventName: "GetAllocation", Method: "GET", Path: "/v1/allocations/{gameInstanceId}", PayloadFormatVersion: "2.0"},
	}
	if got := tpl.HTTPRoutes(); !reflect.DeepEqual(got, wantRoutes) {
		t.Errorf("routes:\n got %+v\nwant %+v", got, wantRoutes)
	}
}
