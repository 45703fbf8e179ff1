package template

import (
	"encoding/json"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxConditionDepth bounds conditions naming conditions (and !If nesting),
// so a cycle in a template is an error, not a hang.
const maxConditionDepth = 32

// condition evaluates the template's condition name as CloudFormation
// would with r's refs: Fn::Equals, Fn::Not, Fn::And, Fn::Or and Condition,
// over the values str and value evaluate.
func (r resolver) condition(name string, depth int) (bool, error) {
	n, ok := r.t.conditions[name]
	if !ok {
		return false, fmt.Errorf("condition %s is not in the template's Conditions", name)
	}
	if depth > maxConditionDepth {
		return false, fmt.Errorf("condition %s: nested more than %d deep (a cycle?)", name, maxConditionDepth)
	}
	return r.cond(&n, "condition "+name, depth+1)
}

// cond evaluates one condition function.
func (r resolver) cond(n *yaml.Node, what string, depth int) (bool, error) {
	name, arg, ok := intrinsic(n)
	if !ok {
		return false, fmt.Errorf("%s (%s): want a condition function (Fn::Equals, Fn::Not, ...)", what, where(n))
	}
	arg = deref(arg)
	switch name {
	case "Condition":
		if !isPlainScalar(arg) {
			return false, fmt.Errorf("%s (%s): Condition needs a name", what, where(n))
		}
		return r.condition(arg.Value, depth)
	case "Fn::Equals":
		if arg.Kind != yaml.SequenceNode || len(arg.Content) != 2 {
			return false, fmt.Errorf("%s (%s): Fn::Equals needs [value, value]", what, where(n))
		}
		a, err := r.comparable(arg.Content[0], what)
		if err != nil {
			return false, err
		}
		b, err := r.comparable(arg.Content[1], what)
		return a == b, err
	case "Fn::Not", "Fn::And", "Fn::Or":
		if arg.Kind != yaml.SequenceNode || len(arg.Content) == 0 || name == "Fn::Not" && len(arg.Content) != 1 {
			return false, fmt.Errorf("%s (%s): %s needs a list of conditions", what, where(n), name)
		}
		all, any := true, false
		for _, c := range arg.Content {
			v, err := r.cond(c, what, depth+1)
			if err != nil {
				return false, err
			}
			all, any = all && v, any || v
		}
		switch name {
		case "Fn::Not":
			return !all, nil
		case "Fn::And":
			return all, nil
		}
		return any, nil
	}
	return false, fmt.Errorf("%s (%s): %s is not a condition function", what, where(n), name)
}

// comparable is a value as Fn::Equals compares it: a string as itself,
// anything else as JSON.
func (r resolver) comparable(n *yaml.Node, what string) (string, error) {
	v, _, err := r.value(n, what, 0)
	if s, ok := v.(string); ok || err != nil {
		return s, err
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// value evaluates n into a JSON value (maps, lists, strings, numbers,
// booleans) the way CloudFormation hands a property to a service: Fn::If
// takes its branch, a Ref to a list parameter (CommaDelimitedList) is a
// list, and ok is false for AWS::NoValue, whose key or item is left out.
func (r resolver) value(n *yaml.Node, what string, depth int) (v any, ok bool, err error) {
	if n, ok, err = r.branch(n, what); err != nil || !ok {
		return nil, false, err
	}
	if depth > maxConditionDepth {
		return nil, false, fmt.Errorf("%s (%s): nested more than %d deep", what, where(n), maxConditionDepth)
	}
	if name, arg, isFn := intrinsic(n); isFn {
		if name == "Ref" && isPlainScalar(arg) && r.isListParameter(arg.Value) {
			s, err := r.ref(arg.Value, what, n)
			var list []any
			for _, item := range strings.Split(s, ",") {
				list = append(list, item)
			}
			return list, err == nil, err
		}
		s, err := r.str(n, what)
		return s, err == nil, err
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for _, kv := range pairs(n) {
			v, ok, err := r.value(kv.value, what+"."+kv.key, depth+1)
			if err != nil {
				return nil, false, err
			}
			if ok {
				m[kv.key] = v
			}
		}
		return m, true, nil
	case yaml.SequenceNode:
		list := []any{}
		for i, c := range n.Content {
			v, ok, err := r.value(c, fmt.Sprintf("%s[%d]", what, i), depth+1)
			if err != nil {
				return nil, false, err
			}
			if ok {
				list = append(list, v)
			}
		}
		return list, true, nil
	}
	return scalarValue(n), true, nil
}

// isListParameter reports whether name is a parameter whose Ref is a list.
func (r resolver) isListParameter(name string) bool {
	typ := r.t.params[name].Type
	return typ == "CommaDelimitedList" || strings.HasPrefix(typ, "List<")
}

// scalarValue is a plain scalar as JSON: numbers and booleans as YAML
// typed them, everything else a string.
func scalarValue(n *yaml.Node) any {
	switch n.Tag {
	case "!!null":
		return nil
	case "!!bool":
		return strings.EqualFold(n.Value, "true")
	case "!!int", "!!float":
		if json.Valid([]byte(n.Value)) {
			return json.Number(n.Value)
		}
	}
	return n.Value
}

// branch follows Fn::If, nested ones included, to the value CloudFormation
// would use. ok is false for AWS::NoValue (and for an absent n): the
// property, variable or operation is left out.
func (r resolver) branch(n *yaml.Node, what string) (chosen *yaml.Node, ok bool, err error) {
	for depth := 0; ; depth++ {
		n = deref(n)
		name, arg, isFn := intrinsic(n)
		switch {
		case n == nil:
			return nil, false, nil
		case isFn && name == "Ref" && isPlainScalar(arg) && arg.Value == "AWS::NoValue":
			return nil, false, nil
		case !isFn || name != "Fn::If":
			return n, true, nil
		case depth > maxConditionDepth:
			return nil, false, fmt.Errorf("%s (%s): Fn::If nested more than %d deep", what, where(n), maxConditionDepth)
		}
		arg = deref(arg)
		if arg.Kind != yaml.SequenceNode || len(arg.Content) != 3 || !isPlainScalar(arg.Content[0]) {
			return nil, false, fmt.Errorf("%s (%s): Fn::If needs [condition, value if true, value if false]", what, where(n))
		}
		yes, err := r.condition(deref(arg.Content[0]).Value, 0)
		if err != nil {
			return nil, false, fmt.Errorf("%s (%s): %w", what, where(n), err)
		}
		if n = arg.Content[2]; yes {
			n = arg.Content[1]
		}
	}
}

// exists reports whether CloudFormation creates res with r's refs: it has
// no Condition, or its Condition holds.
func (r resolver) exists(res *resource) (bool, error) {
	if res.condition == "" {
		return true, nil
	}
	return r.condition(res.condition, 0)
}
