package template

import (
	"reflect"
	"strings"
	"testing"
)

// endpoints is a template that, like template.yaml, serves a function
// either through HTTP API routes declared in the HttpApi's DefinitionBody
// (Endpoint Api) or through its function URL (Endpoint Url, the default).
const endpoints = `
Parameters:
  Endpoint: {Type: String, Default: Url}
  Reserve: {Type: String, Default: "5"}
Conditions:
  Api: !Equals [!Ref Endpoint, Api]
  Url: !Equals [!Ref Endpoint, Url]
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      ReservedConcurrentExecutions: !If [Url, !Ref Reserve, !Ref AWS::NoValue]
      Environment:
        Variables:
          BASE: !If [Url, !GetAtt FnUrl.FunctionUrl, !Ref AWS::NoValue]
          MODE: !If [Api, api, !If [Url, url, !Ref AWS::NoValue]]
      Events:
        List: {Type: HttpApi, Properties: {ApiId: !Ref Api, Method: GET, Path: /things}}
  Api:
    Type: AWS::Serverless::HttpApi
    Properties:
      DefinitionBody:
        openapi: "3.0.1"
        paths:
          /things/{id}:
            parameters: [{name: id, in: path, required: true}]
            post: !If
              - Api
              - operationId: Make
                x-amazon-apigateway-integration:
                  type: aws_proxy
                  payloadFormatVersion: "2.0"
                  uri: !Sub "arn:${AWS::Partition}:apigateway:${AWS::Region}:lambda:path/2015-03-31/functions/${Fn.Arn}/invocations"
              - !Ref AWS::NoValue
            get:
              x-amazon-apigateway-integration: {type: AWS_PROXY, payloadFormatVersion: "2.0", uri: !GetAtt Fn.Arn}
            delete:
              summary: no integration of its own, as SAM completes it from an event
  FnUrl:
    Type: AWS::Lambda::Url
    Condition: Url
    Properties: {TargetFunctionArn: !GetAtt Fn.Arn, AuthType: NONE}
`

func TestDefinitionBodyRoutes(t *testing.T) {
	list := Route{FunctionLogicalID: "Fn", EventName: "List", Method: "GET", Path: "/things", PayloadFormatVersion: "2.0"}
	get := Route{FunctionLogicalID: "Fn", EventName: "GET /things/{id}", Method: "GET", Path: "/things/{id}", PayloadFormatVersion: "2.0"}
	create := Route{FunctionLogicalID: "Fn", EventName: "Make", Method: "POST", Path: "/things/{id}", PayloadFormatVersion: "2.0"}
	tpl := mustParse(t, endpoints)
	for _, tc := range []struct {
		endpoint string
		want     []Route
	}{
		{"", []Route{list, get}}, // the default: POST is AWS::NoValue
		{"Url", []Route{list, get}},
		{"Api", []Route{list, create, get}},
	} {
		got, err := tpl.HTTPRoutes(map[string]string{"Endpoint": tc.endpoint})
		if tc.endpoint == "" {
			got, err = tpl.HTTPRoutes(nil)
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Endpoint %q: %v\n got %+v\nwant %+v", tc.endpoint, err, got, tc.want)
		}
	}
}

// withResource is endpoints with one more resource.
func withResource(yaml string) string { return endpoints + yaml }

func TestDefinitionBodyErrors(t *testing.T) {
	api := func(op string) string {
		return withResource("  Api2:\n    Type: AWS::Serverless::HttpApi\n    Properties:\n      DefinitionBody:\n        paths:\n          /other:\n            put:\n" + op)
	}
	integration := func(fields string) string {
		return api("              x-amazon-apigateway-integration: {" + fields + "}\n")
	}
	for name, tc := range map[string]struct{ src, want string }{
		"HTTP integration":       {integration(`type: http_proxy, payloadFormatVersion: "1.0", uri: "https://example.com"`), "only Lambda proxy integrations"},
		"literal uri":            {integration(`type: aws_proxy, payloadFormatVersion: "2.0", uri: "arn:aws:lambda:us-east-1:1:function:f"`), "want !GetAtt <Function>.Arn"},
		"uri naming two":         {integration(`type: aws_proxy, payloadFormatVersion: "2.0", uri: !Sub "${Fn.Arn}${Fn.Arn}"`), "want !GetAtt <Function>.Arn"},
		"uri naming no function": {integration(`type: aws_proxy, payloadFormatVersion: "2.0", uri: !Sub "${Api.Arn}"`), "Api is not a function"},
		"no payload format":      {integration(`type: aws_proxy, uri: !GetAtt Fn.Arn`), "payloadFormatVersion: missing value"},
		"If without branches":    {api("              !If [Api, {}]\n"), "Fn::If needs [condition"},
		"unknown condition":      {api("              !If [Nope, {}, {}]\n"), "condition Nope is not in the template"},
		"declared twice": {withResource("  Api3:\n    Type: AWS::Serverless::HttpApi\n    Properties:\n      DefinitionBody:\n        paths:\n          /things:\n            get:\n" +
			"              x-amazon-apigateway-integration: {type: aws_proxy, payloadFormatVersion: \"2.0\", uri: !GetAtt Fn.Arn}\n"), "route GET /things is declared twice: by Fn (List) and by Fn (GET /things)"},
		"DefinitionUri":   {withResource("  Api4:\n    Type: AWS::Serverless::HttpApi\n    Properties:\n      DefinitionUri: api.yaml\n"), "DefinitionUri cannot be read locally"},
		"intrinsic paths": {withResource("  Api5:\n    Type: AWS::Serverless::HttpApi\n    Properties:\n      DefinitionBody:\n        paths: !If [Api, {}, {}]\n"), "paths (line"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := mustParse(t, tc.src).HTTPRoutes(map[string]string{"Endpoint": "Api"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestFunctionURLs(t *testing.T) {
	url := FunctionURL{LogicalID: "FnUrl", FunctionLogicalID: "Fn", AuthType: "NONE", InvokeMode: "BUFFERED"}
	sam := FunctionURL{LogicalID: "SamUrl", FunctionLogicalID: "Sam", AuthType: "NONE", InvokeMode: "BUFFERED"}
	samFunction := "  Sam:\n    Type: AWS::Serverless::Function\n    Properties:\n      FunctionUrlConfig: {AuthType: NONE, InvokeMode: BUFFERED}\n"
	for name, tc := range map[string]struct {
		src      string
		endpoint string
		want     []FunctionURL
	}{
		"created by its Condition":  {endpoints, "Url", []FunctionURL{url}},
		"left out by its Condition": {endpoints, "Api", nil},
		"SAM FunctionUrlConfig":     {withResource(samFunction), "Api", []FunctionURL{sam}},
		"TargetFunctionArn by Ref": {withResource("  ByRef:\n    Type: AWS::Lambda::Url\n    Properties: {TargetFunctionArn: !Ref Fn, AuthType: NONE}\n"), "Api",
			[]FunctionURL{{LogicalID: "ByRef", FunctionLogicalID: "Fn", AuthType: "NONE", InvokeMode: "BUFFERED"}}},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := mustParse(t, tc.src).FunctionURLs(map[string]string{"Endpoint": tc.endpoint})
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("%v\n got %+v\nwant %+v", err, got, tc.want)
			}
		})
	}
}

// What the local front end cannot serve as Lambda would is refused, with
// the URL and the reason.
func TestFunctionURLErrors(t *testing.T) {
	url := func(props string) string {
		return withResource("  Bad:\n    Type: AWS::Lambda::Url\n    Properties: {" + props + "}\n")
	}
	for name, tc := range map[string]struct{ src, want string }{
		"IAM auth":     {url("TargetFunctionArn: !GetAtt Fn.Arn, AuthType: AWS_IAM"), "function URL Bad: AuthType AWS_IAM: only NONE is served locally"},
		"streaming":    {url("TargetFunctionArn: !GetAtt Fn.Arn, AuthType: NONE, InvokeMode: RESPONSE_STREAM"), "InvokeMode RESPONSE_STREAM: only BUFFERED"},
		"CORS":         {url("TargetFunctionArn: !GetAtt Fn.Arn, AuthType: NONE, Cors: {AllowOrigins: ['*']}"), "Cors cannot be served locally"},
		"alias":        {url("TargetFunctionArn: !GetAtt Fn.Arn, AuthType: NONE, Qualifier: live"), "Qualifier cannot be served locally"},
		"no function":  {url("TargetFunctionArn: !GetAtt Api.Arn, AuthType: NONE"), "TargetFunctionArn"},
		"no AuthType":  {url("TargetFunctionArn: !GetAtt Fn.Arn"), "AuthType: missing value"},
		"Globals":      {"Globals:\n  Function:\n    FunctionUrlConfig: {AuthType: NONE}\n" + endpoints, "Globals.Function.FunctionUrlConfig"},
		"SAM IAM auth": {withResource("  Sam:\n    Type: AWS::Serverless::Function\n    Properties:\n      FunctionUrlConfig: {AuthType: AWS_IAM}\n"), "function URL SamUrl: AuthType AWS_IAM"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := mustParse(t, tc.src).FunctionURLs(nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// A variable under Fn::If takes its branch; AWS::NoValue leaves it unset;
// !GetAtt of a URL the parameters do not create says so.
func TestFunctionEnvFollowsConditions(t *testing.T) {
	tpl := mustParse(t, endpoints)
	local := map[string]string{"FnUrl.FunctionUrl": "http://127.0.0.1:3001/"}
	env, err := tpl.FunctionEnv("Fn", local)
	if want := map[string]string{"BASE": "http://127.0.0.1:3001/", "MODE": "url"}; err != nil || !reflect.DeepEqual(env, want) {
		t.Errorf("Endpoint Url: %v, %v; want %v", env, err, want)
	}
	env, err = tpl.FunctionEnv("Fn", map[string]string{"Endpoint": "Api"})
	if want := map[string]string{"MODE": "api"}; err != nil || !reflect.DeepEqual(env, want) {
		t.Errorf("Endpoint Api: %v, %v; want %v", env, err, want)
	}
	env, err = tpl.FunctionEnv("Fn", map[string]string{"Endpoint": "neither"})
	if err != nil || len(env) != 0 {
		t.Errorf("Endpoint neither: %v, %v; want no variables", env, err)
	}
	always := mustParse(t, withResource("  Other:\n    Type: AWS::Serverless::Function\n    Properties:\n      Environment:\n        Variables:\n          BASE: !GetAtt FnUrl.FunctionUrl\n"))
	_, err = always.FunctionEnv("Other", map[string]string{"Endpoint": "Api"})
	if err == nil || !strings.Contains(err.Error(), "FnUrl is not created with these parameters (its Condition Url is false)") {
		t.Errorf("!GetAtt of a URL that is not created: %v", err)
	}
	_, err = always.FunctionEnv("Other", nil)
	if err == nil || !strings.Contains(err.Error(), "cannot resolve !GetAtt FnUrl.FunctionUrl locally; pass it in refs") {
		t.Errorf("!GetAtt of a URL without its local value: %v", err)
	}
}

func TestFunctionReservedConcurrency(t *testing.T) {
	tpl := mustParse(t, endpoints)
	for _, tc := range []struct {
		refs map[string]string
		want int
	}{
		{nil, 5},
		{map[string]string{"Reserve": "1"}, 1},
		{map[string]string{"Endpoint": "Api"}, 0}, // AWS::NoValue: none reserved
	} {
		if got, err := tpl.FunctionReservedConcurrency("Fn", tc.refs); err != nil || got != tc.want {
			t.Errorf("%v: %d, %v; want %d", tc.refs, got, err, tc.want)
		}
	}
	if _, err := tpl.FunctionReservedConcurrency("Fn", map[string]string{"Reserve": "many"}); err == nil {
		t.Error("a reservation that is no number was accepted")
	}
	if _, err := tpl.FunctionReservedConcurrency("Api", nil); err == nil {
		t.Error("the reserved concurrency of an API was read")
	}
}
