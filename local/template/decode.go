package template

import (
	"cmp"
	"fmt"
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

var (
	nodeType     = reflect.TypeFor[*yaml.Node]()
	durationType = reflect.TypeFor[time.Duration]()
)

// decode fills what into points at from n, evaluated like r.str: strings,
// booleans, whole numbers (a time.Duration counts seconds) within a field's
// `range:"min,max"`, and pointers, lists and structs of them. A struct reads
// a mapping: each exported field the key its `cfn:"Key[,required]"` tag
// names (a dotted key reads nested mappings), else its own name (as the AWS
// SDK's types are named), and an embedded struct the same mapping; an
// absent key keeps the field's value. A `getatt:"Attr Type"` field is the
// logical ID its !GetAtt names (getAttOf), a *yaml.Node the node as written.
func (r resolver) decode(n *yaml.Node, what string, into any) error {
	return r.decodeValue(n, what, reflect.ValueOf(into).Elem(), "")
}

func (r resolver) decodeValue(n *yaml.Node, what string, v reflect.Value, tag reflect.StructTag) error {
	if ga := tag.Get("getatt"); ga != "" {
		attr, typ, _ := strings.Cut(ga, " ")
		id, err := r.getAttOf(n, what, attr, typ)
		v.SetString(id)
		return err
	}
	if v.Type() == nodeType {
		v.Set(reflect.ValueOf(deref(n)))
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		return r.decodeValue(n, what, v.Elem(), tag)
	case reflect.Struct:
		m, err := r.object(n, what)
		if err != nil {
			return err
		}
		return r.decodeFields(m, what, v)
	case reflect.Slice:
		items, err := r.list(n, what)
		v.Set(reflect.MakeSlice(v.Type(), len(items), len(items)))
		for i := 0; i < len(items) && err == nil; i++ {
			err = r.decodeValue(items[i], fmt.Sprintf("%s[%d]", what, i), v.Index(i), tag)
		}
		return err
	case reflect.String:
		s, err := r.str(n, what)
		v.SetString(s)
		return err
	case reflect.Bool:
		b, err := r.boolean(n, what)
		v.SetBool(b)
		return err
	case reflect.Int, reflect.Int64:
		i, err := r.integer(n, what)
		if err != nil {
			return err
		}
		var lo, hi int64
		if _, scanned := fmt.Sscanf(tag.Get("range"), "%d,%d", &lo, &hi); scanned == nil && (i < lo || i > hi) {
			return fmt.Errorf("%s %d: want %d to %d", what, i, lo, hi)
		}
		if v.Type() == durationType {
			i *= int64(time.Second)
		}
		v.SetInt(i)
		return nil
	}
	panic("template: cannot decode into " + v.Type().String())
}

func (r resolver) decodeFields(m *yaml.Node, what string, v reflect.Value) error {
	for _, f := range reflect.VisibleFields(v.Type()) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		key, opt, _ := strings.Cut(f.Tag.Get("cfn"), ",")
		n, path := m, what
		for part := range strings.SplitSeq(cmp.Or(key, f.Name), ".") {
			var err error
			if n, err = r.object(n, path); err != nil {
				return err
			}
			n, path = lookup(n, part), strings.TrimPrefix(path+"."+part, ".")
		}
		if n == nil && opt == "required" {
			return fmt.Errorf("%s is required", path)
		}
		if n != nil {
			if err := r.decodeValue(n, path, v.FieldByIndex(f.Index), f.Tag); err != nil {
				return err
			}
		}
	}
	return nil
}
