//go:build integration

package tests

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// The API contract: Document holds the HTTP API to its OpenAPI document,
// docs/openapi.yaml. It lists the document's operations (so a test can
// compare them with template.yaml's routes) and validates every request
// and response that passes through Middleware against it, with
// github.com/pb33f/libopenapi-validator (OpenAPI 3.1, JSON Schema 2020-12).
// The tests wrap the handlers they call with it (validated).

// DocumentPath is where the contract lives below the repository root.
const DocumentPath = "docs/openapi.yaml"

// Operation is one operation of the document.
type Operation struct {
	Method string // upper case
	Path   string // the path template, e.g. /v1/allocations/{gameInstanceId}
	ID     string // its operationId
}

// Exchange is one validated request and response: the operation (its
// operationId, or "" for a path the document does not have) and the status.
type Exchange struct {
	Operation string
	Status    int
}

// Document is the loaded contract. It is safe for concurrent use.
type Document struct {
	validator validator.Validator
	version   float32
	ops       []Operation
	// The answers to routes the document lacks (404, 405) are checked
	// against these component schemas.
	errorResponse, gatewayMessage *base.Schema
	schemas                       schema_validation.SchemaValidator

	mu     sync.Mutex
	counts map[Exchange]int
}

// Load parses <root>/docs/openapi.yaml, checks it against the OpenAPI
// specification's own schema and prepares the validator.
func Load(root string) (*Document, error) {
	path := filepath.Join(root, DocumentPath)
	spec, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the API contract: %w", err)
	}
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("build the model of %s: %w", path, err)
	}
	opts := []config.Option{
		// date-time and the other formats are part of the contract.
		config.WithFormatAssertions(),
		config.WithAuthenticationFunc(authenticate),
	}
	v, errs := validator.NewValidator(doc, opts...)
	if len(errs) > 0 {
		return nil, fmt.Errorf("prepare the validator for %s: %w", path, errors.Join(errs...))
	}
	if ok, problems := v.ValidateDocument(); !ok {
		return nil, fmt.Errorf("%s is not a valid OpenAPI document: %s", path, describe(problems))
	}
	d := &Document{validator: v, version: versionOf(model.Model.Version), counts: map[Exchange]int{},
		schemas: schema_validation.NewSchemaValidator(opts...)}
	if d.ops, err = operationsOf(&model.Model); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for name, dst := range map[string]**base.Schema{"ErrorResponse": &d.errorResponse, "GatewayMessage": &d.gatewayMessage} {
		if *dst = componentSchema(&model.Model, name); *dst == nil {
			return nil, fmt.Errorf("%s has no components.schemas.%s, which answers to unknown routes are checked against", path, name)
		}
	}
	return d, nil
}

// Operations lists the document's operations, sorted by path and method.
func (d *Document) Operations() []Operation {
	return append([]Operation(nil), d.ops...)
}

// Counts is how many exchanges passed validation, per operation and status.
func (d *Document) Counts() map[Exchange]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[Exchange]int, len(d.counts))
	for k, v := range d.counts {
		out[k] = v
	}
	return out
}

func (d *Document) count(e Exchange) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.counts[e]++
}

func operationsOf(m *v3.Document) ([]Operation, error) {
	var ops []Operation
	if m.Paths == nil {
		return nil, errors.New("the document has no paths")
	}
	for path, item := range m.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			if op.OperationId == "" {
				return nil, fmt.Errorf("%s %s has no operationId", strings.ToUpper(method), path)
			}
			ops = append(ops, Operation{Method: strings.ToUpper(method), Path: path, ID: op.OperationId})
		}
	}
	sort.Slice(ops, func(i, j int) bool {
		if ops[i].Path != ops[j].Path {
			return ops[i].Path < ops[j].Path
		}
		return ops[i].Method < ops[j].Method
	})
	return ops, nil
}

func componentSchema(m *v3.Document, name string) *base.Schema {
	if m.Components == nil || m.Components.Schemas == nil {
		return nil
	}
	proxy := m.Components.Schemas.GetOrZero(name)
	if proxy == nil {
		return nil
	}
	return proxy.Schema()
}

// match finds the operation serving method and path: literal segments
// equal, a {parameter} matching one non-empty segment.
func (d *Document) match(method, path string) (Operation, bool) {
	got := strings.Split(path, "/")
	for _, op := range d.ops {
		if op.Method != method {
			continue
		}
		want := strings.Split(op.Path, "/")
		if len(want) != len(got) {
			continue
		}
		ok := true
		for i := range want {
			if strings.HasPrefix(want[i], "{") && strings.HasSuffix(want[i], "}") {
				ok = ok && got[i] != ""
			} else {
				ok = ok && got[i] == want[i]
			}
		}
		if ok {
			return op, true
		}
	}
	return Operation{}, false
}

// versionOf is the document's OpenAPI version as the schema validator
// takes it (3.1 selects JSON Schema 2020-12 semantics).
func versionOf(v string) float32 {
	if strings.HasPrefix(v, "3.0") {
		return 3.0
	}
	return 3.1
}
