package streams

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Filter is a compiled FilterCriteria: a record is delivered when any of its
// patterns matches (an empty Filter matches everything), as Lambda does.
// Patterns use EventBridge's syntax: nested objects, lists of literals, and
// anything-but (a value, a list, or {"prefix"}/{"suffix"}), prefix, suffix,
// equals-ignore-case and exists; anything else (numeric, wildcard, $or,
// cidr) is refused, never ignored. A field the record lacks matches only
// {"exists": false}; a list in the record matches when any element does.
// (quamina has no suffix, takes anything-but only as a list of strings,
// and accepts wildcard, which Lambda's filters do not offer.)
type Filter struct {
	patterns []map[string]any // checked by checkObject
}

// CompileFilter compiles FilterCriteria patterns (JSON objects).
func CompileFilter(patterns []string) (*Filter, error) {
	f := &Filter{}
	for i, p := range patterns {
		obj, err := DecodeDocument([]byte(p))
		if err == nil {
			err = checkObject(obj, "")
		}
		if err != nil {
			return nil, fmt.Errorf("pattern %d: %w", i, err)
		}
		f.patterns = append(f.patterns, obj)
	}
	return f, nil
}

// checkObject refuses what the matcher cannot evaluate, keys in order so
// that the first problem named is always the same.
func checkObject(obj map[string]any, path string) error {
	if len(obj) == 0 {
		return fmt.Errorf("%s: empty object", cmp.Or(path, "pattern"))
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		p := path + "." + k
		switch v := obj[k].(type) {
		case map[string]any:
			if err := checkObject(v, p); err != nil {
				return err
			}
		case []any:
			if len(v) == 0 {
				return fmt.Errorf("%s: empty list matches nothing", p)
			}
			for _, item := range v {
				if _, err := matchValue(item, ""); err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
			}
		default:
			return fmt.Errorf("%s: want an object or a list, got %v", p, v)
		}
	}
	return nil
}

// Match reports whether the record passes the filter.
func (f *Filter) Match(r Record) (bool, error) {
	if f == nil || len(f.patterns) == 0 {
		return true, nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return false, err
	}
	doc, err := DecodeDocument(b)
	return err == nil && f.MatchDocument(doc), err
}

// MatchDocument matches a decoded JSON document (numbers as json.Number).
func (f *Filter) MatchDocument(doc map[string]any) bool {
	if f == nil || len(f.patterns) == 0 {
		return true
	}
	return slices.ContainsFunc(f.patterns, func(p map[string]any) bool { return matchObject(p, doc) })
}

func matchObject(pattern, doc map[string]any) bool {
	for k, p := range pattern {
		v, present := doc[k]
		if nested, ok := p.(map[string]any); ok {
			obj, _ := v.(map[string]any)
			if !matchObject(nested, obj) {
				return false
			}
		} else if !matchLeaf(p.([]any), v, present) {
			return false
		}
	}
	return true
}

func matchLeaf(alternatives []any, v any, present bool) bool {
	values := []any{v}
	if list, ok := v.([]any); ok {
		values = list
	}
	for _, alt := range alternatives {
		if op, ok := alt.(map[string]any); ok && op["exists"] != nil {
			if op["exists"] == present {
				return true
			}
			continue
		}
		for _, x := range values {
			if ok, _ := matchValue(alt, x); ok && present {
				return true
			}
		}
	}
	return false
}

func isLiteral(v any) bool {
	switch v.(type) {
	case string, json.Number, bool, nil:
		return true
	}
	return false
}

// matchValue matches the present value x against one element of a
// pattern's list, a literal or an operator (exists is matchLeaf's). Its
// error does not depend on x: CompileFilter calls it once to refuse what
// it cannot evaluate.
func matchValue(alt, x any) (bool, error) {
	if isLiteral(alt) {
		return equal(alt, x), nil
	}
	op, _ := alt.(map[string]any)
	if len(op) != 1 {
		return false, fmt.Errorf("want a value or a one-operator object, got %v", alt)
	}
	s, isString := x.(string)
	for name, arg := range op {
		str, argIsString := arg.(string)
		switch name {
		case "prefix", "suffix", "equals-ignore-case":
			if !argIsString {
				return false, fmt.Errorf("%s needs a string", name)
			}
			return isString && stringOp(name, s, str), nil
		case "exists":
			if _, ok := arg.(bool); !ok {
				return false, errors.New("exists needs true or false")
			}
			return false, nil
		case "anything-but":
			return anythingBut(arg, x)
		}
		return false, fmt.Errorf("operator %q is not supported by the local filter", name)
	}
	return false, nil
}

func stringOp(name, s, arg string) bool {
	switch name {
	case "prefix":
		return strings.HasPrefix(s, arg)
	case "suffix":
		return strings.HasSuffix(s, arg)
	}
	return strings.EqualFold(s, arg)
}

func anythingBut(arg, x any) (bool, error) {
	switch a := arg.(type) {
	case []any:
		if len(a) == 0 || slices.ContainsFunc(a, func(v any) bool { return !isLiteral(v) || v == nil }) {
			return false, errors.New("anything-but list needs strings or numbers")
		}
		return !slices.ContainsFunc(a, func(v any) bool { return equal(v, x) }), nil
	case map[string]any:
		for sub, v := range a {
			p, ok := v.(string)
			if len(a) != 1 || (sub != "prefix" && sub != "suffix") || !ok {
				return false, fmt.Errorf("anything-but %q is not supported locally", sub)
			}
			s, isString := x.(string)
			return isString && !stringOp(sub, s, p), nil
		}
	}
	if !isLiteral(arg) || arg == nil {
		return false, errors.New("anything-but needs a value, a list or {prefix|suffix}")
	}
	return !equal(arg, x), nil
}

// equal compares a pattern literal with a record value: strings and
// booleans exactly, numbers by value, null with null.
func equal(pattern, x any) bool {
	p, ok := pattern.(json.Number)
	if !ok {
		return pattern == x // string, bool or nil: never an uncomparable pair
	}
	n, ok := x.(json.Number)
	if !ok {
		return false
	}
	a, err1 := strconv.ParseFloat(string(p), 64)
	b, err2 := strconv.ParseFloat(string(n), 64)
	return err1 == nil && err2 == nil && a == b
}

// DecodeDocument decodes JSON the way MatchDocument expects it.
func DecodeDocument(b []byte) (map[string]any, error) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	if m, ok := doc.(map[string]any); ok {
		return m, nil
	}
	return nil, errors.New("want a JSON object")
}
