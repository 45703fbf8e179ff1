package template

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
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
			if typ == nil || !isPlainScalar(typ) || typ.Value != "HttpApi" {
				continue
			}
			route, err := r.route(res.id, ev.key, lookup(ev.value, "Properties"))
			if err != nil {
				return nil, fmt.Errorf("function %s event %s: %w", res.id, ev.key, err)
			}
			routes = append(routes, route)
		}
	}
	return routes, nil
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
