package template

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// resolver evaluates template values with the intrinsics that have a
// meaning locally. Anything else (FindInMap, ImportValue, ...) depends on
// deploy-time state and is an error naming the value and its line.
type resolver struct {
	t *Template
	// refs maps a Ref target (logical ID or parameter) or a GetAtt
	// "LogicalID.Attribute" to its local value; it wins over parameter
	// defaults and pseudo parameters.
	refs map[string]string
}

// str evaluates n to a string: a scalar, or a Ref, GetAtt, Sub or Join.
func (r resolver) str(n *yaml.Node, what string) (string, error) {
	n = deref(n)
	if n == nil {
		return "", fmt.Errorf("%s: missing value", what)
	}
	name, arg, ok := intrinsic(n)
	if !ok {
		if n.Kind != yaml.ScalarNode {
			return "", fmt.Errorf("%s (%s): want a scalar, got a %s", what, where(n), kindNames[n.Kind])
		}
		if n.Tag == "!!null" {
			return "", nil
		}
		return n.Value, nil
	}
	switch name {
	case "Ref":
		if !isPlainScalar(arg) {
			return "", fmt.Errorf("%s (%s): !Ref needs a name", what, where(n))
		}
		return r.ref(arg.Value, what, n)
	case "Fn::GetAtt":
		key, err := getAttKey(arg)
		if err != nil {
			return "", fmt.Errorf("%s (%s): %w", what, where(n), err)
		}
		if v, ok := r.refs[key]; ok {
			return v, nil
		}
		return "", r.unresolvedGetAtt(key, what, n)
	case "Fn::Sub":
		return r.sub(arg, what, n)
	case "Fn::Join":
		return r.join(arg, what, n)
	}
	return "", fmt.Errorf("%s (%s): intrinsic %s cannot be evaluated locally", what, where(n), name)
}

// unresolvedGetAtt says why !GetAtt key has no local value: its resource
// is not created with these parameters (CloudFormation refuses that too),
// or its value was not passed in refs.
func (r resolver) unresolvedGetAtt(key, what string, at *yaml.Node) error {
	id, _, _ := strings.Cut(key, ".")
	if res, ok := r.t.byID[id]; ok {
		if created, err := r.exists(res); err == nil && !created {
			return fmt.Errorf("%s (%s): !GetAtt %s: %s is not created with these parameters (its Condition %s is false)",
				what, where(at), key, id, res.condition)
		}
	}
	return fmt.Errorf("%s (%s): cannot resolve !GetAtt %s locally; pass it in refs", what, where(at), key)
}

func (r resolver) ref(name, what string, at *yaml.Node) (string, error) {
	if v, ok := r.refs[name]; ok {
		return v, nil
	}
	if param, isParam := r.t.params[name]; isParam {
		if param.Default.Kind == 0 {
			return "", fmt.Errorf("%s (%s): parameter %s has no Default; pass a value in refs", what, where(at), name)
		}
		return r.str(&param.Default, "default of parameter "+name)
	}
	if v, ok := pseudoParameters[name]; ok {
		return v, nil
	}
	if _, isResource := r.t.byID[name]; isResource {
		return "", fmt.Errorf("%s (%s): !Ref %s names a resource; pass its local value in refs", what, where(at), name)
	}
	return "", fmt.Errorf("%s (%s): !Ref %s names no parameter or resource", what, where(at), name)
}

// pseudoParameters are the values `sam local` uses for AWS::* references.
var pseudoParameters = map[string]string{
	"AWS::Region": "us-east-1", "AWS::AccountId": "123456789012", "AWS::Partition": "aws",
	"AWS::URLSuffix": "amazonaws.com", "AWS::StackName": "local", "AWS::NoValue": "",
}

func getAttKey(arg *yaml.Node) (string, error) {
	arg = deref(arg)
	switch {
	case isPlainScalar(arg) && strings.Contains(arg.Value, "."):
		return arg.Value, nil
	case arg.Kind == yaml.SequenceNode && len(arg.Content) == 2 &&
		isPlainScalar(arg.Content[0]) && isPlainScalar(arg.Content[1]):
		return deref(arg.Content[0]).Value + "." + deref(arg.Content[1]).Value, nil
	}
	return "", fmt.Errorf("!GetAtt needs LogicalID.Attribute or [LogicalID, Attribute]")
}

func (r resolver) sub(arg *yaml.Node, what string, at *yaml.Node) (string, error) {
	arg = deref(arg)
	format, vars := arg, (*yaml.Node)(nil)
	if arg.Kind == yaml.SequenceNode {
		if len(arg.Content) != 2 {
			return "", fmt.Errorf("%s (%s): !Sub list form needs [string, variables]", what, where(at))
		}
		format, vars = deref(arg.Content[0]), deref(arg.Content[1])
	}
	if !isPlainScalar(format) {
		return "", fmt.Errorf("%s (%s): !Sub needs a literal string", what, where(at))
	}
	if strings.Contains(subVariable.ReplaceAllString(format.Value, ""), "${") {
		return "", fmt.Errorf("%s (%s): unterminated ${ in !Sub", what, where(at))
	}
	var err error
	out := subVariable.ReplaceAllStringFunc(format.Value, func(v string) string {
		name := strings.TrimSpace(v[2 : len(v)-1])
		// "${!Name}" is CloudFormation's escape for a literal "${Name}".
		if escaped, ok := strings.CutPrefix(name, "!"); ok {
			return "${" + escaped + "}"
		}
		v, verr := r.subVar(name, vars, what, at)
		err = cmp.Or(err, verr)
		return v
	})
	return out, err
}

var subVariable = regexp.MustCompile(`\$\{[^}]*\}`)

func (r resolver) subVar(name string, vars *yaml.Node, what string, at *yaml.Node) (string, error) {
	if v := lookup(vars, name); v != nil {
		return r.str(v, what+" ${"+name+"}")
	}
	if v, ok := r.refs[name]; ok {
		return v, nil
	}
	if strings.Contains(name, ".") && !strings.HasPrefix(name, "AWS::") {
		return "", fmt.Errorf("%s (%s): cannot resolve ${%s} locally; pass it in refs", what, where(at), name)
	}
	return r.ref(name, what, at)
}

// join evaluates !Join [delimiter, values]: a list, or an intrinsic that
// is one, such as a Ref to a CommaDelimitedList parameter.
func (r resolver) join(arg *yaml.Node, what string, at *yaml.Node) (string, error) {
	arg = deref(arg)
	if arg.Kind != yaml.SequenceNode || len(arg.Content) != 2 || !isPlainScalar(arg.Content[0]) {
		return "", fmt.Errorf("%s (%s): !Join needs [delimiter, [values]]", what, where(at))
	}
	v, _, err := r.value(arg.Content[1], what+" !Join", 0)
	items, isList := v.([]any)
	if err != nil || !isList {
		return "", cmp.Or(err, fmt.Errorf("%s (%s): !Join values must be a list", what, where(at)))
	}
	parts := make([]string, len(items))
	for i, item := range items {
		switch item.(type) {
		case string, json.Number, bool:
			parts[i] = fmt.Sprint(item)
		default:
			return "", fmt.Errorf("%s (%s): !Join values must be strings", what, where(at))
		}
	}
	return strings.Join(parts, deref(arg.Content[0]).Value), nil
}

// boolean accepts the spellings CloudFormation does for booleans.
func (r resolver) boolean(n *yaml.Node, what string) (bool, error) {
	s, err := r.str(n, what)
	if err != nil {
		return false, err
	}
	if b := strings.ToLower(s); b == "true" || b == "false" {
		return b == "true", nil
	}
	return false, fmt.Errorf("%s (%s): want true or false, got %q", what, where(n), s)
}

// integer parses a whole number such as a capacity unit count.
func (r resolver) integer(n *yaml.Node, what string) (int64, error) {
	s, err := r.str(n, what)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s (%s): want an integer, got %q", what, where(n), s)
	}
	return v, nil
}

var kindNames = map[yaml.Kind]string{yaml.MappingNode: "mapping", yaml.SequenceNode: "list", yaml.ScalarNode: "scalar"}

// list returns the items of a literal sequence, or nil when n is absent. A
// list produced by an intrinsic (say !If) is an error rather than being
// silently treated as empty.
func (r resolver) list(n *yaml.Node, what string) ([]*yaml.Node, error) {
	n = deref(n)
	if n == nil {
		return nil, nil
	}
	if err := literal(n, what, yaml.SequenceNode); err != nil {
		return nil, err
	}
	items := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		items[i] = deref(c)
	}
	return items, nil
}

// object checks that n, if present, is a literal mapping.
func (r resolver) object(n *yaml.Node, what string) (*yaml.Node, error) {
	n = deref(n)
	if n == nil {
		return nil, nil
	}
	return n, literal(n, what, yaml.MappingNode)
}

func literal(n *yaml.Node, what string, kind yaml.Kind) error {
	if name, _, ok := intrinsic(n); ok {
		return fmt.Errorf("%s (%s): intrinsic %s cannot be evaluated locally", what, where(n), name)
	}
	if n.Kind != kind {
		return fmt.Errorf("%s (%s): want a %s, got a %s", what, where(n), kindNames[kind], kindNames[n.Kind])
	}
	return nil
}
