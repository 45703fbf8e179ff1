package template

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// operationMethods are the OpenAPI operations of a path item that are
// HTTP API routes, as API Gateway names their methods; the item's other
// keys (parameters, summary, x-…) are not routes.
var operationMethods = map[string]string{
	"get": "GET", "put": "PUT", "post": "POST", "delete": "DELETE", "options": "OPTIONS",
	"head": "HEAD", "patch": "PATCH", "x-amazon-apigateway-any-method": "ANY",
}

// functionArnInSub is how an integration's uri names its function inside
// a !Sub: ${<Function>.Arn}.
var functionArnInSub = regexp.MustCompile(`\$\{\s*([A-Za-z0-9]+)\.Arn\s*\}`)

// eachOperation calls visit with every operation of the DefinitionBody of
// every AWS::Serverless::HttpApi created with r's refs, in template order.
// An operation whose Fn::If picks AWS::NoValue does not exist.
func (r resolver) eachOperation(visit func(api, path, method string, op *yaml.Node) error) error {
	for i := range r.t.resources {
		res := &r.t.resources[i]
		if res.typ != TypeServerlessHttpApi {
			continue
		}
		created, err := r.exists(res)
		if err != nil {
			return fmt.Errorf("HttpApi %s: %w", res.id, err)
		}
		if !created {
			continue
		}
		if lookup(res.props, "DefinitionUri") != nil {
			return fmt.Errorf("HttpApi %s: DefinitionUri cannot be read locally; declare the routes in DefinitionBody", res.id)
		}
		body, err := r.object(lookup(res.props, "DefinitionBody"), res.id+".DefinitionBody")
		if err != nil {
			return err
		}
		paths, err := r.object(lookup(body, "paths"), res.id+".DefinitionBody.paths")
		if err != nil {
			return err
		}
		for _, p := range pairs(paths) {
			if err := r.eachPathOperation(res.id, p, visit); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r resolver) eachPathOperation(api string, p pair, visit func(api, path, method string, op *yaml.Node) error) error {
	item, err := r.object(p.value, api+" path "+p.key)
	if err != nil {
		return err
	}
	for _, m := range pairs(item) {
		method, isOperation := operationMethods[strings.ToLower(m.key)]
		if !isOperation {
			continue
		}
		what := fmt.Sprintf("HttpApi %s %s %s", api, method, p.key)
		op, exists, err := r.branch(m.value, what)
		if err != nil {
			return err
		}
		if !exists {
			continue
		}
		if err := visit(api, p.key, method, op); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}

// definitionRoute reads one operation of an HttpApi's DefinitionBody: ok
// is false when it has no integration, which declares no route of its own
// (SAM completes such an operation from a function's HttpApi event). What
// the local HTTP API cannot serve as API Gateway would is an error.
func (r resolver) definitionRoute(path, method string, op *yaml.Node) (rt Route, ok bool, err error) {
	if op, err = r.object(op, "operation"); err != nil {
		return rt, false, err
	}
	integration, err := r.object(lookup(op, "x-amazon-apigateway-integration"), "x-amazon-apigateway-integration")
	if err != nil || integration == nil {
		return rt, false, err
	}
	typ, err := r.str(lookup(integration, "type"), "integration type")
	if err != nil {
		return rt, false, err
	}
	if !strings.EqualFold(typ, "aws_proxy") {
		return rt, false, fmt.Errorf("integration type %s: only Lambda proxy integrations (aws_proxy) run locally", typ)
	}
	rt = Route{Method: method, Path: path, EventName: method + " " + path}
	if rt.FunctionLogicalID, err = r.integrationFunction(lookup(integration, "uri")); err != nil {
		return rt, false, err
	}
	// Required by API Gateway for a Lambda integration of an HTTP API.
	if rt.PayloadFormatVersion, err = r.str(lookup(integration, "payloadFormatVersion"), "integration payloadFormatVersion"); err != nil {
		return rt, false, err
	}
	if id := lookup(op, "operationId"); id != nil {
		if rt.EventName, err = r.str(id, "operationId"); err != nil {
			return rt, false, err
		}
	}
	return rt, true, nil
}

// integrationFunction is the function an integration's uri invokes:
// !GetAtt <Function>.Arn, or a !Sub naming ${<Function>.Arn} once (the
// apigateway:…:lambda:path/…/functions/<arn>/invocations form).
func (r resolver) integrationFunction(n *yaml.Node) (string, error) {
	const want = "want !GetAtt <Function>.Arn or a !Sub with ${<Function>.Arn}"
	n = deref(n)
	name, arg, ok := intrinsic(n)
	switch {
	case n == nil:
		return "", fmt.Errorf("integration uri: missing (%s)", want)
	case ok && name == "Fn::GetAtt":
		return r.getAttOf(n, "integration uri", "Arn", "function")
	case !ok || name != "Fn::Sub":
		return "", fmt.Errorf("integration uri (%s): %s", where(n), want)
	}
	format := deref(arg)
	if format.Kind == yaml.SequenceNode && len(format.Content) > 0 {
		format = deref(format.Content[0])
	}
	found := functionArnInSub.FindAllStringSubmatch(format.Value, -1)
	if !isPlainScalar(format) || len(found) != 1 {
		return "", fmt.Errorf("integration uri (%s): %s", where(n), want)
	}
	if res, ok := r.t.byID[found[0][1]]; !ok || !isFunction(res.typ) {
		return "", fmt.Errorf("integration uri (%s): %s is not a function of this template", where(n), found[0][1])
	}
	return found[0][1], nil
}
