package template

import (
	"cmp"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// FunctionURL is a Lambda function URL of the template: an AWS::Lambda::Url
// resource, or a SAM function's FunctionUrlConfig (whose resource SAM
// names <Function>Url). `!GetAtt <LogicalID>.FunctionUrl` is its URL.
type FunctionURL struct {
	LogicalID         string
	FunctionLogicalID string
	// AuthType is NONE: the only one served locally, where no request is
	// signed (as with the local HTTP API's missing IAM auth).
	AuthType string
	// InvokeMode is BUFFERED, the default and the only one served locally.
	InvokeMode string
}

// FunctionURLs returns the function URLs CloudFormation creates with refs,
// in template order: an AWS::Lambda::Url whose Condition is false is left
// out. What the local front end could not serve as Lambda does (AWS_IAM
// auth, response streaming, CORS, a Qualifier's alias) is an error.
func (t *Template) FunctionURLs(refs map[string]string) ([]FunctionURL, error) {
	r := resolver{t: t, refs: refs}
	if lookup(t.functionGlobals, "FunctionUrlConfig") != nil {
		return nil, fmt.Errorf("Globals.Function.FunctionUrlConfig cannot be served locally; give each function its own")
	}
	var out []FunctionURL
	for i := range t.resources {
		res := &t.resources[i]
		u, props := FunctionURL{LogicalID: res.id, InvokeMode: "BUFFERED"}, res.props
		switch config := lookup(res.props, "FunctionUrlConfig"); {
		case res.typ == TypeServerlessFunction && config != nil:
			u.LogicalID, u.FunctionLogicalID, props = res.id+"Url", res.id, config
		case res.typ != TypeLambdaURL:
			continue
		}
		created, err := r.exists(res)
		if err == nil && created {
			err = r.functionURL(&u, props)
			out = append(out, u)
		}
		if err != nil {
			return nil, fmt.Errorf("function URL %s: %w", u.LogicalID, err)
		}
	}
	return out, nil
}

// functionURL reads a URL's properties; TargetFunctionArn names its
// function unless it is known (FunctionUrlConfig).
func (r resolver) functionURL(u *FunctionURL, p *yaml.Node) (err error) {
	if p, err = r.object(p, "Properties"); err != nil {
		return err
	}
	for _, key := range []string{"Cors", "Qualifier"} {
		if _, set, err := r.branch(lookup(p, key), key); err != nil || set {
			return cmp.Or(err, fmt.Errorf("%s cannot be served locally", key))
		}
	}
	if u.FunctionLogicalID == "" {
		if u.FunctionLogicalID, err = r.targetFunction(lookup(p, "TargetFunctionArn")); err != nil {
			return err
		}
	}
	if u.AuthType, err = r.str(lookup(p, "AuthType"), "AuthType"); err != nil {
		return err
	}
	if u.AuthType != "NONE" {
		return fmt.Errorf("AuthType %s: only NONE is served locally, where nothing checks a SigV4 signature", u.AuthType)
	}
	if mode, set, err := r.branch(lookup(p, "InvokeMode"), "InvokeMode"); err != nil || set {
		if err == nil {
			u.InvokeMode, err = r.str(mode, "InvokeMode")
		}
		if err == nil && u.InvokeMode != "BUFFERED" {
			err = fmt.Errorf("InvokeMode %s: only BUFFERED is served locally", u.InvokeMode)
		}
		return err
	}
	return nil
}

// targetFunction is the function a TargetFunctionArn names: !GetAtt
// <Function>.Arn, or !Ref <Function> (its name, which Lambda accepts too).
func (r resolver) targetFunction(n *yaml.Node) (string, error) {
	if name, arg, ok := intrinsic(n); ok && name == "Ref" && isPlainScalar(arg) {
		if res, ok := r.t.byID[arg.Value]; ok && isFunction(res.typ) {
			return arg.Value, nil
		}
		return "", fmt.Errorf("TargetFunctionArn (%s): %s is not a function of this template", where(n), arg.Value)
	}
	return r.getAttOf(n, "TargetFunctionArn", "Arn", "function")
}
