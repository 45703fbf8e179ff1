//go:build integration

package tests

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi/datamodel/high/base"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
)

// onlyInShape are the fields a shape has and its schema does not, each
// with why. An Allocation's attempts are apishape.Attempt, whose body only
// a failed allocation's error answer carries (FailedAttempt).
var onlyInShape = map[string]string{
	"Allocation.attempts[].body": "httpapi.AttemptsOf leaves the upstream's body out of the allocation routes' answers",
}

// TestShapesMatchTheDocument holds every public JSON shape (apishape, which
// the handlers encode and both SDKs decode) to its schema in
// docs/openapi.yaml, field by field and through the shapes it nests
// (server, attempts, error, linkedServer, sessions): each field of the
// one is in the other, and a field the shape always writes (no omitempty
// or omitzero) is exactly one the schema requires.
func TestShapesMatchTheDocument(t *testing.T) {
	spec, err := os.ReadFile(filepath.Join(stack.repoRoot, DocumentPath))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		t.Fatal(err)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	for name, shape := range map[string]reflect.Type{
		"Allocation":        reflect.TypeFor[apishape.Allocation](),
		"GameServerState":   reflect.TypeFor[apishape.GameServerState](),
		"ErrorResponse":     reflect.TypeFor[apishape.ErrorResponse](),
		"Regions":           reflect.TypeFor[apishape.Regions](),
		"AllocationRequest": reflect.TypeFor[apishape.AllocateRequest](),
	} {
		schema := componentSchema(&model.Model, name)
		if schema == nil {
			t.Errorf("%s has no components.schemas.%s", DocumentPath, name)
			continue
		}
		compareShape(t, name, shape, schema)
	}
}

// compareShape compares the struct shape with schema, path naming where
// both are (e.g. Allocation.attempts[]).
func compareShape(t *testing.T, path string, shape reflect.Type, schema *base.Schema) {
	t.Helper()
	props := map[string]*base.Schema{}
	if schema.Properties != nil {
		for name, proxy := range schema.Properties.FromOldest() {
			props[name] = proxy.Schema()
		}
	}
	seen := map[string]bool{}
	for _, f := range apishape.Fields(shape) {
		where := path + "." + f.Name
		seen[f.Name] = true
		prop, ok := props[f.Name]
		if _, skip := onlyInShape[where]; skip {
			if ok {
				t.Errorf("%s is in the document now: take it off onlyInShape", where)
			}
			continue
		}
		if !ok || prop == nil {
			t.Errorf("%s: the shape (%v) writes it, the document's schema has no such property", where, shape)
			continue
		}
		if required := slices.Contains(schema.Required, f.Name); required != f.Always {
			t.Errorf("%s: the document requires it: %v; the shape always writes it (no omitempty/omitzero): %v", where, required, f.Always)
		}
		compareType(t, where, f.Type, prop)
	}
	for name := range props {
		if !seen[name] {
			t.Errorf("%s.%s: the document has it, the shape (%v) does not", path, name, shape)
		}
	}
}

// compareType checks that a field's Go type encodes to the property's JSON
// type, and compares a nested shape (directly, or as array items) with the
// property's schema.
func compareType(t *testing.T, where string, typ reflect.Type, prop *base.Schema) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if want := jsonType(typ); len(prop.Type) > 0 && !slices.Contains(prop.Type, want) {
		t.Errorf("%s: the shape writes a JSON %s (%v), the document says %v", where, want, typ, prop.Type)
		return
	}
	switch {
	case typ.Kind() == reflect.Slice:
		if prop.Items == nil || !prop.Items.IsA() || prop.Items.A == nil {
			t.Errorf("%s: an array in the shape, without items in the document", where)
			return
		}
		compareType(t, where+"[]", typ.Elem(), prop.Items.A.Schema())
	case typ.Kind() == reflect.Struct && typ != reflect.TypeFor[time.Time]():
		compareShape(t, where, typ, prop)
	}
}

// jsonType is the JSON type encoding/json writes a value of typ as.
func jsonType(typ reflect.Type) string {
	switch typ.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Struct:
		if typ == reflect.TypeFor[time.Time]() {
			return "string"
		}
	}
	return "object"
}
