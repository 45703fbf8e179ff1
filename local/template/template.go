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
)

// Template is a parsed template. It is immutable after Load/Parse.
type Template struct {
	resources []resource
	byID      map[string]*resource
	// paramDefaults holds each parameter's Default node (nil if none).
	paramDefaults map[string]*yaml.Node
	// paramTypes holds each parameter's Type (String, CommaDelimitedList, ...).
	paramTypes map[string]string
	// conditions are the Conditions section's entries, unevaluated.
	conditions map[string]*yaml.Node
	// functionGlobals is Globals.Function, or nil.
	functionGlobals *yaml.Node
	routes          []Route
}

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
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parsing YAML: %w", err)
	}
	root := deref(&doc)
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = deref(root.Content[0])
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: template must be a mapping", root.Line)
	}

	t := &Template{byID: map[string]*resource{}, paramDefaults: map[string]*yaml.Node{}, paramTypes: map[string]string{},
		conditions: map[string]*yaml.Node{}}
	if err := t.parseParameters(lookup(root, "Parameters")); err != nil {
		return nil, err
	}
	for _, kv := range pairs(lookup(root, "Conditions")) {
		t.conditions[kv.key] = kv.value
	}
	if err := t.parseResources(lookup(root, "Resources")); err != nil {
		return nil, err
	}
	if globals := lookup(root, "Globals"); globals != nil {
		t.functionGlobals = lookup(globals, "Function")
	}
	routes, err := t.parseRoutes()
	if err != nil {
		return nil, err
	}
	t.routes = routes
	return t, nil
}

func (t *Template) parseParameters(params *yaml.Node) error {
	if params == nil {
		return nil
	}
	if params.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: Parameters must be a mapping", params.Line)
	}
	for _, kv := range pairs(params) {
		t.paramDefaults[kv.key] = lookup(kv.value, "Default")
		if typ := lookup(kv.value, "Type"); isPlainScalar(typ) {
			t.paramTypes[kv.key] = typ.Value
		}
	}
	return nil
}

func (t *Template) parseResources(res *yaml.Node) error {
	if res == nil {
		return errors.New("template has no Resources section")
	}
	if res.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: Resources must be a mapping", res.Line)
	}
	for _, kv := range pairs(res) {
		if kv.value.Kind != yaml.MappingNode {
			return fmt.Errorf("line %d: resource %s must be a mapping", kv.value.Line, kv.key)
		}
		typNode := lookup(kv.value, "Type")
		if typNode == nil || !isPlainScalar(typNode) {
			return fmt.Errorf("line %d: resource %s needs a literal Type", kv.value.Line, kv.key)
		}
		props := lookup(kv.value, "Properties")
		if props != nil && props.Kind != yaml.MappingNode {
			return fmt.Errorf("line %d: Properties of %s must be a mapping", props.Line, kv.key)
		}
		res := resource{id: kv.key, typ: typNode.Value, props: props}
		if c := lookup(kv.value, "Condition"); c != nil {
			if !isPlainScalar(c) {
				return fmt.Errorf("line %d: Condition of %s must be a condition's name", c.Line, kv.key)
			}
			res.condition = c.Value
		}
		t.resources = append(t.resources, res)
	}
	for i := range t.resources {
		t.byID[t.resources[i].id] = &t.resources[i]
	}
	return nil
}

// ResourceType returns the Type of the resource with logicalID.
func (t *Template) ResourceType(logicalID string) (string, bool) {
	r, ok := t.byID[logicalID]
	if !ok {
		return "", false
	}
	return r.typ, true
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
