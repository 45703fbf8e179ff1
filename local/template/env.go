package template

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// FunctionEnv returns the environment variables a function gets once
// deployed: Globals.Function.Environment.Variables overlaid with the
// function's own. Values are evaluated like CloudFormation would, with refs
// standing in for deploy-time values: refs maps a Ref target (a logical ID
// such as a table, or a parameter, overriding its Default) or a GetAtt
// "LogicalID.Attribute" to its local value. A value that cannot be
// evaluated is an error naming the variable, so a new template variable
// cannot silently go missing locally. Fn::If takes its branch, and a
// variable whose value is AWS::NoValue is not set, as CloudFormation does.
func (t *Template) FunctionEnv(logicalID string, refs map[string]string) (map[string]string, error) {
	res, ok := t.byID[logicalID]
	if !ok {
		return nil, fmt.Errorf("no resource %s in template", logicalID)
	}
	if !isFunction(res.typ) {
		return nil, fmt.Errorf("resource %s is a %s, not a function", logicalID, res.typ)
	}
	r := resolver{t: t, refs: refs}
	env := map[string]string{}
	sources := []*yaml.Node{res.props}
	// Globals apply to SAM functions only, and the function's own values win.
	if res.typ == TypeServerlessFunction {
		sources = []*yaml.Node{t.functionGlobals, res.props}
	}
	for _, src := range sources {
		vars, err := r.variables(src)
		if err != nil {
			return nil, fmt.Errorf("environment of %s: %w", logicalID, err)
		}
		for _, kv := range pairs(vars) {
			// Fn::If picks the value; AWS::NoValue leaves the variable unset.
			chosen, set, err := r.branch(kv.value, "variable "+kv.key)
			if err != nil {
				return nil, fmt.Errorf("environment of %s: %w", logicalID, err)
			}
			if !set {
				delete(env, kv.key)
				continue
			}
			v, err := r.str(chosen, "variable "+kv.key)
			if err != nil {
				return nil, fmt.Errorf("environment of %s: %w", logicalID, err)
			}
			env[kv.key] = v
		}
	}
	return env, nil
}

// variables returns the Environment.Variables mapping under props, if any.
func (r resolver) variables(props *yaml.Node) (*yaml.Node, error) {
	envNode, err := r.object(lookup(props, "Environment"), "Environment")
	if err != nil || envNode == nil {
		return nil, err
	}
	return r.object(lookup(envNode, "Variables"), "Environment.Variables")
}
