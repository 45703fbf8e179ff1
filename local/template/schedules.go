package template

import "fmt"

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
	for _, res := range t.resources {
		if res.typ != TypeServerlessFunction {
			continue
		}
		events, err := r.object(lookup(res.props, "Events"), res.id+".Events")
		if err != nil {
			return nil, err
		}
		for _, ev := range pairs(events) {
			typ := lookup(ev.value, "Type")
			if typ == nil || !isPlainScalar(typ) || typ.Value != "Schedule" {
				continue
			}
			props, err := r.object(lookup(ev.value, "Properties"), "Properties")
			if err != nil || props == nil {
				return nil, fmt.Errorf("function %s event %s: no Properties: %v", res.id, ev.key, err)
			}
			expr, err := r.str(lookup(props, "Schedule"), "Schedule")
			if err != nil {
				return nil, fmt.Errorf("function %s event %s: %w", res.id, ev.key, err)
			}
			out = append(out, Schedule{FunctionLogicalID: res.id, EventName: ev.key, Expression: expr})
		}
	}
	return out, nil
}
