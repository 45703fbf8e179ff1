package apishape

import (
	"reflect"
	"strings"
)

// Field is one JSON field of a shape, as encoding/json writes it.
type Field struct {
	// Name is the field's JSON name.
	Name string
	// Always: the field is written whatever its value (neither omitempty
	// nor omitzero), so a document describing the shape requires it.
	Always bool
	// Type is the field's Go type.
	Type reflect.Type
}

// Fields lists the JSON fields of struct type t (a pointer to one is
// followed) in the order encoding/json writes them: an untagged embedded
// struct's fields in its place, without the fields tagged "-" and the
// unexported ones. It is for the tests that hold other descriptions of a
// shape (docs/openapi.yaml, the event detail) to the shape itself.
func Fields(t reflect.Type) []Field {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []Field
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case tag == "-":
			continue
		case f.Anonymous && tag == "" && indirect(f.Type).Kind() == reflect.Struct:
			out = append(out, Fields(f.Type)...)
			continue
		case !f.IsExported():
			continue
		case name == "":
			name = f.Name
		}
		omitted := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		out = append(out, Field{Name: name, Always: !omitted, Type: f.Type})
	}
	return out
}

func indirect(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}
