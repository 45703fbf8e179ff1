package template

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// sample exercises the short-form tags a real SAM template uses, in places
// this package must interpret and in places it must merely tolerate.
const sample = `
AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Parameters:
  Stage:
    Type: String
    Default: dev
  Secret:
    Type: String
Conditions:
  IsProd: !Equals [!Ref Stage, prod]
Globals:
  Function:
    Timeout: 10
    Environment:
      Variables:
        LOG_LEVEL: info
        STAGE: !Ref Stage
Resources:
  Api:
    Type: AWS::Serverless::HttpApi
  Sessions:
    Type: AWS::DynamoDB::Table
    DeletionPolicy: !If [IsProd, Retain, Delete]
    Properties:
      TableName: !Sub "${AWS::StackName}-sessions"
      BillingMode: PAY_PER_REQUEST
      AttributeDefinitions:
        - AttributeName: sessionId
          AttributeType: S
        - &playerAttr
          AttributeName: playerId
          AttributeType: S
      KeySchema:
        - AttributeName: sessionId
          KeyType: HASH
      GlobalSecondaryIndexes:
        - IndexName: byPlayer
          KeySchema:
            - AttributeName: playerId
              KeyType: HASH
          Projection:
            ProjectionType: INCLUDE
            NonKeyAttributes: [status]
      TimeToLiveSpecification:
        AttributeName: expiresAt
        Enabled: true
      SSESpecification:
        SSEEnabled: !If [IsProd, true, false]
      Tags:
        - Key: stage
          Value: !Ref Stage
  Ledger:
    Type: "AWS::DynamoDB::Table"
    Properties:
      ProvisionedThroughput: {ReadCapacityUnits: 5, WriteCapacityUnits: "2"}
      AttributeDefinitions:
        - {AttributeName: pk, AttributeType: S}
        - {AttributeName: sk, AttributeType: N}
      KeySchema:
        - {AttributeName: pk, KeyType: HASH}
        - {AttributeName: sk, KeyType: RANGE}
      StreamSpecification:
        StreamViewType: NEW_IMAGE
      TimeToLiveSpecification:
        AttributeName: ttl
        Enabled: false
  Handler:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: .
      Handler: bootstrap
      Environment:
        Variables:
          TABLE: !Ref Sessions
          TABLE_ARN: !GetAtt Sessions.Arn
          QUEUE_URL: !Sub "https://sqs.${AWS::Region}.amazonaws.com/${AWS::AccountId}/${Stage}-q"
          LOG_LEVEL: debug
          JOINED:
            Fn::Join: ["-", [a, !Ref Stage]]
      Events:
        Create:
          Type: HttpApi
          Properties:
            ApiId: !Ref Api
            Method: post
            Path: /v1/sessions
        Get:
          Type: HttpApi
          Properties:
            ApiId: !Ref Api
            Method: GET
            Path: /v1/sessions/{sessionId}
            PayloadFormatVersion: "1.0"
        Nightly:
          Type: Schedule
          Properties:
            Schedule: rate(1 day)
  CatchAll:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Default:
          Type: HttpApi
Outputs:
  Url:
    Value: !Sub "https://${Api}.execute-api.${AWS::Region}.amazonaws.com"
  Arn:
    Value: !GetAtt Handler.Arn
`

func mustParse(t *testing.T, src string) *Template {
	t.Helper()
	tpl, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return tpl
}

func TestTablesFromSample(t *testing.T) {
	tables, err := mustParse(t, sample).Tables()
	if err != nil {
		t.Fatalf("Tables: %v", err)
	}
	if len(tables) != 2 || tables[0].LogicalID != "Sessions" || tables[1].LogicalID != "Ledger" {
		t.Fatalf("tables = %+v", tables)
	}

	s := tables[0]
	want := &dynamodb.CreateTableInput{
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("sessionId"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("playerId"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("sessionId"), KeyType: types.KeyTypeHash}},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName:  aws.String("byPlayer"),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("playerId"), KeyType: types.KeyTypeHash}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"status"}},
		}},
	}
	if !reflect.DeepEqual(s.Input, want) {
		t.Errorf("Sessions input:\n got %+v\nwant %+v", s.Input, want)
	}
	if s.TTLAttribute != "expiresAt" {
		t.Errorf("Sessions TTL = %q", s.TTLAttribute)
	}

	l := tables[1]
	if l.Input.BillingMode != types.BillingModeProvisioned ||
		aws.ToInt64(l.Input.ProvisionedThroughput.ReadCapacityUnits) != 5 ||
		aws.ToInt64(l.Input.ProvisionedThroughput.WriteCapacityUnits) != 2 {
		t.Errorf("Ledger billing %v throughput %+v", l.Input.BillingMode, l.Input.ProvisionedThroughput)
	}
	if len(l.Input.KeySchema) != 2 || l.Input.KeySchema[1].KeyType != types.KeyTypeRange {
		t.Errorf("Ledger keys %+v", l.Input.KeySchema)
	}
	if l.Input.StreamSpecification == nil || l.Input.StreamSpecification.StreamViewType != types.StreamViewTypeNewImage {
		t.Errorf("Ledger stream %+v", l.Input.StreamSpecification)
	}
	if l.TTLAttribute != "" {
		t.Errorf("disabled TTL reported as %q", l.TTLAttribute)
	}
	if l.Input.TableName != nil {
		t.Errorf("TableName must be left to the caller, got %q", *l.Input.TableName)
	}
}

func TestHTTPRoutesFromSample(t *testing.T) {
	got, err := mustParse(t, sample).HTTPRoutes(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Route{
		{FunctionLogicalID: "Handler", EventName: "Create", Method: "POST", Path: "/v1/sessions", PayloadFormatVersion: "2.0"},
		{FunctionLogicalID: "Handler", EventName: "Get", Method: "GET", Path: "/v1/sessions/{sessionId}", PayloadFormatVersion: "1.0"},
		{FunctionLogicalID: "CatchAll", EventName: "Default", Method: "ANY", Path: "$default", PayloadFormatVersion: "2.0"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("routes:\n got %+v\nwant %+v", got, want)
	}
}

func TestFunctionEnvResolvesIntrinsics(t *testing.T) {
	tpl := mustParse(t, sample)
	env, err := tpl.FunctionEnv("Handler", map[string]string{
		"Sessions":     "local-sessions",
		"Sessions.Arn": "arn:aws:dynamodb:us-east-1:123456789012:table/local-sessions",
	})
	if err != nil {
		t.Fatalf("FunctionEnv: %v", err)
	}
	want := map[string]string{
		"LOG_LEVEL": "debug", // the function's value beats Globals
		"STAGE":     "dev",   // parameter default
		"TABLE":     "local-sessions",
		"TABLE_ARN": "arn:aws:dynamodb:us-east-1:123456789012:table/local-sessions",
		"QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/dev-q",
		"JOINED":    "a-dev",
	}
	if !reflect.DeepEqual(env, want) {
		t.Fatalf("env:\n got %v\nwant %v", env, want)
	}

	// A ref naming no parameter or resource is ignored: the local stack
	// can pass values for parameters template.yaml does not declare yet.
	env, err = tpl.FunctionEnv("Handler", map[string]string{
		"Sessions":         "local-sessions",
		"Sessions.Arn":     "arn:aws:dynamodb:us-east-1:123456789012:table/local-sessions",
		"NotYetAParameter": "x",
	})
	if err != nil || !reflect.DeepEqual(env, want) {
		t.Fatalf("with an unknown ref: %v, %v", env, err)
	}

	// refs override parameter defaults too.
	env, err = tpl.FunctionEnv("Handler", map[string]string{"Sessions": "t", "Sessions.Arn": "a", "Stage": "ci"})
	if err != nil || env["STAGE"] != "ci" || env["QUEUE_URL"] != "https://sqs.us-east-1.amazonaws.com/123456789012/ci-q" {
		t.Fatalf("override: %v, %v", env, err)
	}

	_, err = tpl.FunctionEnv("Handler", nil)
	if err == nil || !strings.Contains(err.Error(), "variable TABLE") || !strings.Contains(err.Error(), "Sessions") {
		t.Fatalf("unresolved !Ref should name the variable and target, got %v", err)
	}
	if _, err := tpl.FunctionEnv("Sessions", nil); err == nil {
		t.Fatal("FunctionEnv of a table should fail")
	}
}

func TestTableErrorsAreSpecific(t *testing.T) {
	cases := map[string]struct{ body, want string }{
		"intrinsic billing": {`
      BillingMode: !If [IsProd, PROVISIONED, PAY_PER_REQUEST]
      AttributeDefinitions: [{AttributeName: id, AttributeType: S}]
      KeySchema: [{AttributeName: id, KeyType: HASH}]`, "BillingMode (line 6): intrinsic Fn::If"},
		"undefined key": {`
      BillingMode: PAY_PER_REQUEST
      AttributeDefinitions: [{AttributeName: id, AttributeType: S}]
      KeySchema: [{AttributeName: other, KeyType: HASH}]`, `key "other" has no AttributeDefinitions entry`},
		"provisioned without throughput": {`
      AttributeDefinitions: [{AttributeName: id, AttributeType: S}]
      KeySchema: [{AttributeName: id, KeyType: HASH}]`, "ProvisionedThroughput is required"},
		"intrinsic index list": {`
      BillingMode: PAY_PER_REQUEST
      AttributeDefinitions: [{AttributeName: id, AttributeType: S}]
      KeySchema: [{AttributeName: id, KeyType: HASH}]
      GlobalSecondaryIndexes: !If [IsProd, [], []]`, "GlobalSecondaryIndexes (line 9): intrinsic Fn::If"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			src := "Resources:\n  T:\n    Type: AWS::DynamoDB::Table\n    Properties:\n      TableName: x" + tc.body + "\n"
			_, err := mustParse(t, src).Tables()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "table T") {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for name, src := range map[string]string{
		"empty":        "  \n",
		"not yaml":     "Resources: [unclosed",
		"no resources": "Parameters: {}\n",
		"no type":      "Resources:\n  X:\n    Properties: {}\n",
		"bad route":    "Resources:\n  F:\n    Type: AWS::Serverless::Function\n    Properties:\n      Events:\n        E:\n          Type: HttpApi\n          Properties:\n            Path: !ImportValue p\n",
	} {
		if _, err := Parse([]byte(src)); err == nil {
			t.Errorf("%s: Parse succeeded", name)
		}
	}
	if _, err := Load("does-not-exist.yaml"); err == nil || !strings.Contains(err.Error(), "reading template") {
		t.Errorf("Load of a missing file: %v", err)
	}
}

func TestLookupHelpers(t *testing.T) {
	tpl := mustParse(t, sample)
	if got := tpl.LogicalIDs(TypeDynamoDBTable); !reflect.DeepEqual(got, []string{"Sessions", "Ledger"}) {
		t.Errorf("LogicalIDs = %v", got)
	}
}

// fakeDynamoDB records calls and reports tables ACTIVE immediately.
type fakeDynamoDB struct {
	created []string
	ttl     map[string]string
	failOn  string
}

func (f *fakeDynamoDB) CreateTable(_ context.Context, in *dynamodb.CreateTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	if aws.ToString(in.TableName) == f.failOn {
		return nil, errors.New("ResourceInUseException: table exists")
	}
	f.created = append(f.created, aws.ToString(in.TableName))
	return &dynamodb.CreateTableOutput{}, nil
}

func (f *fakeDynamoDB) DescribeTable(_ context.Context, in *dynamodb.DescribeTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{TableName: in.TableName, TableStatus: types.TableStatusActive}}, nil
}

func (f *fakeDynamoDB) UpdateTimeToLive(_ context.Context, in *dynamodb.UpdateTimeToLiveInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error) {
	if f.ttl == nil {
		f.ttl = map[string]string{}
	}
	f.ttl[aws.ToString(in.TableName)] = aws.ToString(in.TimeToLiveSpecification.AttributeName)
	return &dynamodb.UpdateTimeToLiveOutput{}, nil
}

func TestCreateTablesWithFake(t *testing.T) {
	tpl := mustParse(t, sample)
	ctx := context.Background()

	f := &fakeDynamoDB{}
	err := CreateTables(ctx, f, tpl, map[string]string{"Sessions": "s-local"})
	if err == nil || !strings.Contains(err.Error(), "Ledger") || len(f.created) != 0 {
		t.Fatalf("missing name: err %v, created %v", err, f.created)
	}

	if err := CreateTables(ctx, f, tpl, map[string]string{"Sessions": "s-local", "Ledger": "l-local"}); err != nil {
		t.Fatalf("CreateTables: %v", err)
	}
	if !reflect.DeepEqual(f.created, []string{"s-local", "l-local"}) {
		t.Errorf("created %v", f.created)
	}
	if !reflect.DeepEqual(f.ttl, map[string]string{"s-local": "expiresAt"}) {
		t.Errorf("ttl %v", f.ttl)
	}

	f = &fakeDynamoDB{failOn: "l-local"}
	err = CreateTables(ctx, f, tpl, map[string]string{"Sessions": "s-local", "Ledger": "l-local"})
	if err == nil || !strings.Contains(err.Error(), "creating table l-local (Ledger)") {
		t.Fatalf("CreateTable failure not wrapped: %v", err)
	}
}
