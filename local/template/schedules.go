package template

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Schedule is one Schedule event of a serverless function.
type Schedule struct {
	FunctionLogicalID string
	EventName         string
	// Expression is the resolved schedule, e.g. "rate(1 minute)".
	Expression string
}

// Schedules returns every Schedule event of every AWS::Serverless::Function
// in template order, with the expression evaluated like FunctionEnv does
// (refs override parameter defaults).
func (t *Template) Schedules(refs map[string]string) ([]Schedule, error) {
	var out []Schedule
	r := resolver{t: t, refs: refs}
	err := r.eachEvent("Schedule", func(fn, event string, props *yaml.Node) error {
		p, err := r.object(props, "Properties")
		if err != nil || p == nil {
			return fmt.Errorf("no Properties: %v", err)
		}
		expr, err := r.str(lookup(p, "Schedule"), "Schedule")
		out = append(out, Schedule{FunctionLogicalID: fn, EventName: event, Expression: expr})
		return err
	})
	return out, err
}
