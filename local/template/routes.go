package template

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Route is one HttpApi event of a serverless function.
type Route struct {
	FunctionLogicalID string
	EventName         string
	// Method is upper case; "ANY" matches every method.
	Method string
	// Path is the API Gateway route path, e.g. /v1/allocations/{gameInstanceId};
	// "$default" for an event without Path and Method (SAM's catch-all).
	Path string
	// PayloadFormatVersion is the event's, defaulting to "2.0" as HTTP APIs do.
	PayloadFormatVersion string
}

// HTTPRoutes returns every HttpApi event of every AWS::Serverless::Function,
// in template order. REST (Type: Api) events are not included. Routes are
// parsed by Load, so a route that cannot be read locally fails there.
func (t *Template) HTTPRoutes() []Route {
	return append([]Route(nil), t.routes...)
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
	p, err := r.object(props, "Properties")
	if err != nil || p == nil {
		return route, err
	}
	if n := lookup(p, "Method"); n != nil {
		m, err := r.str(n, "Method")
		if err != nil {
			return route, err
		}
		route.Method = strings.ToUpper(m)
	}
	if n := lookup(p, "Path"); n != nil {
		if route.Path, err = r.str(n, "Path"); err != nil {
			return route, err
		}
	}
	if n := lookup(p, "PayloadFormatVersion"); n != nil {
		if route.PayloadFormatVersion, err = r.str(n, "PayloadFormatVersion"); err != nil {
			return route, err
		}
	}
	return route, nil
}
