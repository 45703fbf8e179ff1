// Package template reads the SAM/CloudFormation template.yaml so local
// tooling (tables in DynamoDB Local, routes served to local handlers) is
// derived from the one deployed definition instead of a hand-kept copy.
//
// CloudFormation short-form tags (!Ref, !GetAtt, !Sub, ...) are not YAML
// types go.yaml.in/yaml/v3 knows, so the template is decoded into yaml.Node
// trees and interpreted here; unknown tags are kept, and only fail if a
// value this package needs cannot be resolved locally.
package template

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"
)

// Resource types this package interprets.
const (
	TypeDynamoDBTable      = "AWS::DynamoDB::Table"
	TypeServerlessFunction = "AWS::Serverless::Function"
	TypeLambdaFunction     = "AWS::Lambda::Function"
	TypeServerlessHttpApi  = "AWS::Serverless::HttpApi"
	TypeLambdaURL          = "AWS::Lambda::Url"
	TypeSQSQueue           = "AWS::SQS::Queue"
	TypeEventsEventBus     = "AWS::Events::EventBus"
	TypeEventsRule         = "AWS::Events::Rule"
	TypeSecret             = "AWS::SecretsManager::Secret"
)

// Template is a parsed template. It is immutable after Load/Parse.
type Template struct {
	resources []resource
	byID      map[string]*resource
	params    map[string]parameter
	// conditions are the Conditions section's entries, unevaluated.
	conditions map[string]yaml.Node
	// functionGlobals is Globals.Function (a zero node when absent).
	functionGlobals *yaml.Node
	routes          []Route
}

type parameter struct {
	Type    string    `yaml:"Type"`    // String, CommaDelimitedList, ...
	Default yaml.Node `yaml:"Default"` // zero if none
}

func isFunction(typ string) bool { return typ == TypeServerlessFunction || typ == TypeLambdaFunction }

type resource struct {
	id    string
	typ   string
	props *yaml.Node // mapping node, or nil when Properties is absent
	// condition is the resource's Condition, "" when it always exists.
	condition string
}

// Load reads and parses the template at path.
func Load(path string) (*Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading template: %w", err)
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", path, err)
	}
	return t, nil
}

// Parse parses template YAML (or JSON, which is YAML).
func Parse(data []byte) (*Template, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty template")
	}
	var doc struct {
		Parameters map[string]parameter `yaml:"Parameters"`
		Conditions map[string]yaml.Node `yaml:"Conditions"`
		Globals    struct {
			Function yaml.Node `yaml:"Function"`
		} `yaml:"Globals"`
		Resources yaml.Node `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parsing YAML: %w", err)
	}
	t := &Template{byID: map[string]*resource{}, params: doc.Parameters, conditions: doc.Conditions, functionGlobals: &doc.Globals.Function}
	if err := t.parseResources(&doc.Resources); err != nil {
		return nil, err
	}
	routes, err := t.parseRoutes()
	if err != nil {
		return nil, err
	}
	t.routes = routes
	return t, nil
}

func (t *Template) parseResources(res *yaml.Node) error {
	if res = deref(res); res.Kind == 0 {
		return errors.New("template has no Resources section")
	}
	if res.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: Resources must be a mapping", res.Line)
	}
	for _, kv := range pairs(res) {
		var r struct {
			Type       yaml.Node `yaml:"Type"`
			Condition  yaml.Node `yaml:"Condition"`
			Properties yaml.Node `yaml:"Properties"`
		}
		err := kv.value.Decode(&r)
		typ, cond, props := deref(&r.Type), deref(&r.Condition), deref(&r.Properties)
		switch {
		case err != nil || !isPlainScalar(typ):
			return fmt.Errorf("line %d: resource %s must be a mapping with a literal Type", kv.value.Line, kv.key)
		case cond.Kind != 0 && !isPlainScalar(cond):
			return fmt.Errorf("line %d: Condition of %s must be a condition's name", cond.Line, kv.key)
		case props.Kind != 0 && props.Kind != yaml.MappingNode:
			return fmt.Errorf("line %d: Properties of %s must be a mapping", props.Line, kv.key)
		case props.Kind == 0:
			props = nil
		}
		t.resources = append(t.resources, resource{id: kv.key, typ: typ.Value, props: props, condition: cond.Value})
	}
	for i := range t.resources {
		t.byID[t.resources[i].id] = &t.resources[i]
	}
	return nil
}

// LogicalIDs returns the logical IDs of all resources of type typ, in
// template order.
func (t *Template) LogicalIDs(typ string) []string {
	var ids []string
	for _, r := range t.resources {
		if r.typ == typ {
			ids = append(ids, r.id)
		}
	}
	return ids
}

// each reads every resource of type typ that CloudFormation creates with
// r's refs (its Condition holds), in template order; an error names the
// resource as kind and logical ID.
func each[T any](r resolver, typ, kind string, read func(*resource) (T, error)) ([]T, error) {
	var out []T
	for i := range r.t.resources {
		res := &r.t.resources[i]
		if res.typ != typ {
			continue
		}
		created, err := r.exists(res)
		if err == nil && created {
			var v T
			v, err = read(res)
			out = append(out, v)
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", kind, res.id, err)
		}
	}
	return out, nil
}
