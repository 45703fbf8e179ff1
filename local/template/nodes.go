package template

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// deref follows YAML aliases so anchors in a template behave like copies.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

type pair struct {
	key   string
	value *yaml.Node
}

// pairs lists a mapping's entries in document order.
func pairs(m *yaml.Node) []pair {
	m = deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	out := make([]pair, 0, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		out = append(out, pair{key: deref(m.Content[i]).Value, value: deref(m.Content[i+1])})
	}
	return out
}

// lookup returns the value for key in mapping m, or nil.
func lookup(m *yaml.Node, key string) *yaml.Node {
	for _, kv := range pairs(m) {
		if kv.key == key {
			return kv.value
		}
	}
	return nil
}

// isPlainScalar reports whether n is a scalar without a CloudFormation tag.
func isPlainScalar(n *yaml.Node) bool {
	n = deref(n)
	return n != nil && n.Kind == yaml.ScalarNode && !isCustomTag(n.Tag)
}

// isCustomTag distinguishes "!Ref" from yaml's own "!!str" and friends.
func isCustomTag(tag string) bool {
	return strings.HasPrefix(tag, "!") && !strings.HasPrefix(tag, "!!")
}

// intrinsic returns the function name (in long form: "Ref", "Fn::Sub",
// "Condition") and argument if n is an intrinsic function call in either
// short-tag or single-key-mapping form.
func intrinsic(n *yaml.Node) (name string, arg *yaml.Node, ok bool) {
	n = deref(n)
	if n == nil {
		return "", nil, false
	}
	if isCustomTag(n.Tag) {
		short := strings.TrimPrefix(n.Tag, "!")
		switch short {
		case "Ref", "Condition":
			name = short
		default:
			name = "Fn::" + short
		}
		// The tag applies to the node itself; strip it to get the argument.
		argNode := *n
		argNode.Tag = ""
		if n.Kind == yaml.ScalarNode {
			argNode.Tag = "!!str"
		}
		return name, &argNode, true
	}
	if n.Kind == yaml.MappingNode && len(n.Content) == 2 {
		key := deref(n.Content[0]).Value
		if key == "Ref" || key == "Condition" || strings.HasPrefix(key, "Fn::") {
			return key, deref(n.Content[1]), true
		}
	}
	return "", nil, false
}

// where formats a node position for error messages.
func where(n *yaml.Node) string {
	if n == nil {
		return "?"
	}
	return fmt.Sprintf("line %d", n.Line)
}
