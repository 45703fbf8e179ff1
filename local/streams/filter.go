package streams

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Filter is a compiled FilterCriteria: a record is delivered when any of its
// patterns matches (an empty Filter matches everything), as Lambda does.
//
// Patterns use EventBridge's rule syntax. Supported: nested objects, lists
// of literal values (string, number, boolean, null), and the operators
// anything-but (a value, a list of values, or {"prefix"}/{"suffix"}),
// prefix, suffix, equals-ignore-case and exists. Anything else (numeric,
// wildcard, $or, cidr) is rejected when compiling, never ignored. A
// field the record lacks matches only {"exists": false}; a list in the
// record matches when any element does.
type Filter struct {
	patterns []objectPattern
}

type objectPattern struct {
	fields []fieldPattern // sorted by key, for stable error messages
}

type fieldPattern struct {
	key    string
	nested *objectPattern // an object pattern, or
	leaf   []matcher      // a list of alternatives
}

type matcher struct {
	kind   string // "literal", "anything-but", "prefix", "suffix", "equals-ignore-case", "exists"
	values []any  // literal values (json.Number, string, bool, nil) for literal and anything-but
	text   string // prefix/suffix/equals-ignore-case operand
	sub    string // anything-but's "prefix" or "suffix", with text
	exists bool
}

// CompileFilter compiles FilterCriteria patterns (JSON objects).
func CompileFilter(patterns []string) (*Filter, error) {
	f := &Filter{}
	for i, p := range patterns {
		var doc any
		dec := json.NewDecoder(strings.NewReader(p))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("pattern %d: %w", i, err)
		}
		obj, ok := doc.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("pattern %d: want a JSON object", i)
		}
		op, err := compileObject(obj, "")
		if err != nil {
			return nil, fmt.Errorf("pattern %d: %w", i, err)
		}
		f.patterns = append(f.patterns, op)
	}
	return f, nil
}

func compileObject(obj map[string]any, path string) (objectPattern, error) {
	var op objectPattern
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return op, fmt.Errorf("%s: empty object", orRoot(path))
	}
	for _, k := range keys {
		p := path + "." + k
		switch v := obj[k].(type) {
		case map[string]any:
			nested, err := compileObject(v, p)
			if err != nil {
				return op, err
			}
			op.fields = append(op.fields, fieldPattern{key: k, nested: &nested})
		case []any:
			if len(v) == 0 {
				return op, fmt.Errorf("%s: empty list matches nothing", p)
			}
			var ms []matcher
			for _, item := range v {
				m, err := compileMatcher(item, p)
				if err != nil {
					return op, err
				}
				ms = append(ms, m)
			}
			op.fields = append(op.fields, fieldPattern{key: k, leaf: ms})
		default:
			return op, fmt.Errorf("%s: want an object or a list, got %v", p, v)
		}
	}
	return op, nil
}

func orRoot(path string) string {
	if path == "" {
		return "pattern"
	}
	return path
}

func isLiteral(v any) bool {
	switch v.(type) {
	case string, json.Number, bool, nil:
		return true
	}
	return false
}

func compileMatcher(item any, path string) (matcher, error) {
	if isLiteral(item) {
		return matcher{kind: "literal", values: []any{item}}, nil
	}
	obj, ok := item.(map[string]any)
	if !ok || len(obj) != 1 {
		return matcher{}, fmt.Errorf("%s: want a value or a one-operator object, got %v", path, item)
	}
	for op, arg := range obj {
		switch op {
		case "prefix", "suffix", "equals-ignore-case":
			s, ok := arg.(string)
			if !ok {
				return matcher{}, fmt.Errorf("%s: %s needs a string", path, op)
			}
			return matcher{kind: op, text: s}, nil
		case "exists":
			b, ok := arg.(bool)
			if !ok {
				return matcher{}, fmt.Errorf("%s: exists needs true or false", path)
			}
			return matcher{kind: op, exists: b}, nil
		case "anything-but":
			m := matcher{kind: op}
			switch a := arg.(type) {
			case []any:
				for _, v := range a {
					if !isLiteral(v) || v == nil {
						return matcher{}, fmt.Errorf("%s: anything-but list needs strings or numbers", path)
					}
				}
				if len(a) == 0 {
					return matcher{}, fmt.Errorf("%s: anything-but needs values", path)
				}
				m.values = a
			case map[string]any:
				if len(a) != 1 {
					return matcher{}, fmt.Errorf("%s: anything-but object needs one of prefix, suffix", path)
				}
				for sub, s := range a {
					str, ok := s.(string)
					if (sub != "prefix" && sub != "suffix") || !ok {
						return matcher{}, fmt.Errorf("%s: anything-but %q is not supported locally", path, sub)
					}
					m.sub, m.text = sub, str
				}
			default:
				if !isLiteral(a) || a == nil {
					return matcher{}, fmt.Errorf("%s: anything-but needs a value, a list or {prefix|suffix}", path)
				}
				m.values = []any{a}
			}
			return m, nil
		}
		return matcher{}, fmt.Errorf("%s: operator %q is not supported by the local filter", path, op)
	}
	return matcher{}, nil
}

// Match reports whether the record passes the filter.
func (f *Filter) Match(r Record) (bool, error) {
	if f == nil || len(f.patterns) == 0 {
		return true, nil
	}
	doc, err := r.generic()
	if err != nil {
		return false, err
	}
	return f.MatchDocument(doc), nil
}

// MatchDocument matches a decoded JSON document (numbers as json.Number).
func (f *Filter) MatchDocument(doc map[string]any) bool {
	if f == nil || len(f.patterns) == 0 {
		return true
	}
	for _, p := range f.patterns {
		if p.match(doc) {
			return true
		}
	}
	return false
}

func (op objectPattern) match(doc map[string]any) bool {
	for _, fp := range op.fields {
		v, present := doc[fp.key]
		if fp.nested != nil {
			obj, _ := v.(map[string]any)
			if !fp.nested.match(obj) {
				return false
			}
			continue
		}
		if !leafMatch(fp.leaf, v, present) {
			return false
		}
	}
	return true
}

func leafMatch(ms []matcher, v any, present bool) bool {
	values := []any{v}
	if list, ok := v.([]any); ok {
		values = list
	}
	for _, m := range ms {
		if m.kind == "exists" {
			if m.exists == present {
				return true
			}
			continue
		}
		if !present {
			continue
		}
		for _, x := range values {
			if m.matchValue(x) {
				return true
			}
		}
	}
	return false
}

func (m matcher) matchValue(x any) bool {
	switch m.kind {
	case "literal":
		return equal(m.values[0], x)
	case "prefix":
		s, ok := x.(string)
		return ok && strings.HasPrefix(s, m.text)
	case "suffix":
		s, ok := x.(string)
		return ok && strings.HasSuffix(s, m.text)
	case "equals-ignore-case":
		s, ok := x.(string)
		return ok && strings.EqualFold(s, m.text)
	case "anything-but":
		if m.sub != "" {
			s, ok := x.(string)
			if !ok {
				return false
			}
			if m.sub == "prefix" {
				return !strings.HasPrefix(s, m.text)
			}
			return !strings.HasSuffix(s, m.text)
		}
		for _, v := range m.values {
			if equal(v, x) {
				return false
			}
		}
		return true
	}
	return false
}

// equal compares a pattern literal with a record value: strings and
// booleans exactly, numbers by value, null with null.
func equal(pattern, x any) bool {
	switch p := pattern.(type) {
	case nil:
		return x == nil
	case string:
		s, ok := x.(string)
		return ok && s == p
	case bool:
		b, ok := x.(bool)
		return ok && b == p
	case json.Number:
		n, ok := x.(json.Number)
		if !ok {
			return false
		}
		a, err1 := strconv.ParseFloat(string(p), 64)
		b, err2 := strconv.ParseFloat(string(n), 64)
		return err1 == nil && err2 == nil && a == b
	}
	return false
}

// DecodeDocument decodes JSON the way MatchDocument expects it.
func DecodeDocument(b []byte) (map[string]any, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return m, dec.Decode(&m)
}
