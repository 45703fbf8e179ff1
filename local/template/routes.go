package template

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Route is one route of the HTTP API: a function's HttpApi event, or an
// operation of the HttpApi's DefinitionBody whose integration invokes a
// function.
type Route struct {
	FunctionLogicalID string
	// EventName is the event's name, or the operation's operationId.
	EventName string
	// Method is upper case; "ANY" matches every method.
	Method string
	// Path is the API Gateway route path, e.g. /v1/allocations/{gameInstanceId};
	// "$default" for an event without Path and Method (SAM's catch-all).
	Path string
	// PayloadFormatVersion is the event's, defaulting to "2.0" as HTTP APIs do.
	PayloadFormatVersion string
}

// HTTPRoutes returns the routes the HTTP API has once deployed with refs:
// every HttpApi event of every serverless function in template order (read
// by Load), then the operations of the HttpApi's DefinitionBody with a
// Lambda integration. REST (Type: Api) events are not included. A route
// declared twice is an error: locally there is no merge to decide which
// wins.
func (t *Template) HTTPRoutes(refs map[string]string) ([]Route, error) {
	r := resolver{t: t, refs: refs}
	routes, seen := slices.Clone(t.routes), map[string]Route{}
	for _, rt := range routes {
		seen[rt.Method+" "+rt.Path] = rt
	}
	err := r.eachOperation(func(_, path, method string, op *yaml.Node) error {
		rt, ok, err := r.definitionRoute(path, method, op)
		key := rt.Method + " " + rt.Path
		if other, twice := seen[key]; ok && twice {
			return fmt.Errorf("route %s is declared twice: by %s (%s) and by %s (%s)",
				key, other.FunctionLogicalID, other.EventName, rt.FunctionLogicalID, rt.EventName)
		} else if ok {
			seen[key] = rt
			routes = append(routes, rt)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return routes, nil
}

func (t *Template) parseRoutes() ([]Route, error) {
	var routes []Route
	r := resolver{t: t}
	err := r.eachEvent("HttpApi", func(fn, event string, props *yaml.Node) error {
		route, err := r.route(fn, event, props)
		routes = append(routes, route)
		return err
	})
	return routes, err
}

// eachEvent calls visit with the Properties of every event of type typ of
// every serverless function, in template order.
func (r resolver) eachEvent(typ string, visit func(fn, event string, props *yaml.Node) error) error {
	for _, res := range r.t.resources {
		if res.typ != TypeServerlessFunction {
			continue
		}
		events, err := r.object(lookup(res.props, "Events"), res.id+".Events")
		if err != nil {
			return err
		}
		for _, ev := range pairs(events) {
			t := lookup(ev.value, "Type")
			if t == nil || !isPlainScalar(t) || t.Value != typ {
				continue
			}
			if err := visit(res.id, ev.key, lookup(ev.value, "Properties")); err != nil {
				return fmt.Errorf("function %s event %s: %w", res.id, ev.key, err)
			}
		}
	}
	return nil
}

func (r resolver) route(fn, event string, props *yaml.Node) (Route, error) {
	route := Route{FunctionLogicalID: fn, EventName: event, Method: "ANY", Path: "$default", PayloadFormatVersion: "2.0"}
	err := r.decode(props, "", &route)
	route.Method = strings.ToUpper(route.Method)
	return route, err
}

// Schedule is one Schedule event of a serverless function.
type Schedule struct {
	FunctionLogicalID string
	EventName         string
	// Expression is the resolved schedule, e.g. "rate(1 minute)".
	Expression string `cfn:"Schedule,required"`
}

// Schedules returns every Schedule event of every serverless function in
// template order, evaluated with refs like FunctionEnv.
func (t *Template) Schedules(refs map[string]string) ([]Schedule, error) {
	var out []Schedule
	r := resolver{t: t, refs: refs}
	err := r.eachEvent("Schedule", func(fn, event string, props *yaml.Node) error {
		s := Schedule{FunctionLogicalID: fn, EventName: event}
		err := r.decode(props, "", &s)
		out = append(out, s)
		return err
	})
	return out, err
}
