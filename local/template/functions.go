package template

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// FunctionEnv returns the environment variables a function gets once
// deployed: Globals.Function.Environment.Variables overlaid with the
// function's own, evaluated as CloudFormation would with refs standing in
// for deploy-time values (a Ref target, or a GetAtt "LogicalID.Attribute").
// A value that cannot be evaluated is an error naming the variable, so a
// new template variable cannot silently go missing locally.
func (t *Template) FunctionEnv(logicalID string, refs map[string]string) (map[string]string, error) {
	res, err := t.function(logicalID)
	if err != nil {
		return nil, err
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

// FunctionTimeout is a function's Timeout (its own, else Globals.Function's,
// else Lambda's default of 3 s).
func (t *Template) FunctionTimeout(logicalID string) (time.Duration, error) {
	res, err := t.function(logicalID)
	if err != nil {
		return 0, err
	}
	r := resolver{t: t}
	n := lookup(res.props, "Timeout")
	if n == nil && res.typ == TypeServerlessFunction {
		n = lookup(t.functionGlobals, "Timeout")
	}
	if n == nil {
		return 3 * time.Second, nil
	}
	v, err := r.integer(n, logicalID+" Timeout")
	if err != nil {
		return 0, err
	}
	if v < 1 {
		return 0, fmt.Errorf("%s Timeout %d: want whole seconds", logicalID, v)
	}
	return time.Duration(v) * time.Second, nil
}

// FunctionReservedConcurrency is a function's ReservedConcurrentExecutions
// evaluated with refs (Fn::If takes its branch), 0 when it reserves none.
func (t *Template) FunctionReservedConcurrency(logicalID string, refs map[string]string) (int, error) {
	res, err := t.function(logicalID)
	if err != nil {
		return 0, err
	}
	r := resolver{t: t, refs: refs}
	what := logicalID + " ReservedConcurrentExecutions"
	n, set, err := r.branch(lookup(res.props, "ReservedConcurrentExecutions"), what)
	if err != nil || !set {
		return 0, err
	}
	v, err := r.integer(n, what)
	if err == nil && v < 0 {
		err = fmt.Errorf("%s %d: want 0 or more", what, v)
	}
	return int(v), err
}

// EventInvokeConfig is how Lambda handles a function's asynchronous
// invocations (a SAM function's EventInvokeConfig), with Lambda's defaults
// where the template leaves a value out.
type EventInvokeConfig struct {
	MaximumRetryAttempts int           `range:"0,2"`                                     // default 2
	MaximumEventAge      time.Duration `cfn:"MaximumEventAgeInSeconds" range:"60,21600"` // default 6 h
	OnFailureQueue       string        // DestinationConfig.OnFailure's queue, or ""
}

// EventInvokeConfig returns a function's EventInvokeConfig, evaluated with
// refs like FunctionEnv.
func (t *Template) EventInvokeConfig(logicalID string, refs map[string]string) (EventInvokeConfig, error) {
	cfg := EventInvokeConfig{MaximumRetryAttempts: 2, MaximumEventAge: 6 * time.Hour}
	res, err := t.function(logicalID)
	if err != nil {
		return cfg, err
	}
	r := resolver{t: t, refs: refs}
	p := lookup(res.props, "EventInvokeConfig")
	if err = r.decode(p, logicalID+".EventInvokeConfig", &cfg); err == nil {
		cfg.OnFailureQueue, err = r.onFailureQueue(lookup(p, "DestinationConfig"))
	}
	return cfg, err
}

// onFailureQueue reads a DestinationConfig: the logical ID of its
// OnFailure's SQS queue, "" without one. No other destination runs locally.
func (r resolver) onFailureQueue(dest *yaml.Node) (string, error) {
	var d struct {
		OnSuccess *yaml.Node
		OnFailure struct {
			Type        string
			Destination string `cfn:",required" getatt:"Arn AWS::SQS::Queue"`
		}
	}
	d.OnFailure.Type = "SQS"
	err := r.decode(dest, "DestinationConfig", &d)
	switch {
	case err != nil:
	case d.OnSuccess != nil:
		err = fmt.Errorf("DestinationConfig.OnSuccess: not run locally")
	case d.OnFailure.Type != "SQS":
		err = fmt.Errorf("DestinationConfig.OnFailure.Type %q: only SQS runs locally", d.OnFailure.Type)
	}
	return d.OnFailure.Destination, err
}

// function is the function logicalID of the template.
func (t *Template) function(logicalID string) (*resource, error) {
	if res, ok := t.byID[logicalID]; ok && isFunction(res.typ) {
		return res, nil
	}
	return nil, fmt.Errorf("no function %s in the template", logicalID)
}
