package template

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// More resource types this package interprets.
const (
	TypeSQSQueue       = "AWS::SQS::Queue"
	TypeEventsEventBus = "AWS::Events::EventBus"
)

// DynamoDBEventSource is one `Type: DynamoDB` event of a serverless
// function: the event source mapping Lambda creates from it, with every
// setting the local poller honours. Numbers use Lambda's defaults when the
// template leaves them out.
type DynamoDBEventSource struct {
	FunctionLogicalID string
	EventName         string
	// TableLogicalID is the table whose stream feeds the function
	// (Stream: !GetAtt <Table>.StreamArn).
	TableLogicalID   string
	StartingPosition string // TRIM_HORIZON or LATEST
	BatchSize        int    // default 100
	// MaximumBatchingWindow is MaximumBatchingWindowInSeconds (default 0).
	MaximumBatchingWindow time.Duration
	// MaximumRetryAttempts is -1 (the default) for "until the record expires".
	MaximumRetryAttempts       int
	BisectBatchOnFunctionError bool
	// MaximumRecordAge is MaximumRecordAgeInSeconds; 0 when it is -1 (the
	// default): no limit.
	MaximumRecordAge        time.Duration
	ReportBatchItemFailures bool // FunctionResponseTypes has ReportBatchItemFailures
	// OnFailureQueue is the logical ID of the SQS queue of
	// DestinationConfig.OnFailure (Destination: !GetAtt <Queue>.Arn), or "".
	OnFailureQueue string
	// Filters are FilterCriteria.Filters[].Pattern, each a JSON object; a
	// record is delivered when any matches (none: every record).
	Filters []string
}

// DynamoDBEventSources returns every DynamoDB event of every serverless
// function in template order. Values are evaluated like FunctionEnv does
// (refs override parameter defaults, e.g. MaximumRetryAttempts: !Ref P).
func (t *Template) DynamoDBEventSources(refs map[string]string) ([]DynamoDBEventSource, error) {
	var out []DynamoDBEventSource
	r := resolver{t: t, refs: refs}
	err := r.eachEvent("DynamoDB", func(fn, event string, props *yaml.Node) error {
		src, err := r.dynamoDBEventSource(fn, event, props)
		out = append(out, src)
		return err
	})
	return out, err
}

func (r resolver) dynamoDBEventSource(fn, event string, props *yaml.Node) (DynamoDBEventSource, error) {
	src := DynamoDBEventSource{FunctionLogicalID: fn, EventName: event, BatchSize: 100, MaximumRetryAttempts: -1}
	p, err := r.object(props, "Properties")
	if err != nil || p == nil {
		return src, fmt.Errorf("no Properties: %v", err)
	}
	if src.TableLogicalID, err = r.getAttOf(lookup(p, "Stream"), "Stream", "StreamArn", TypeDynamoDBTable); err != nil {
		return src, err
	}
	if src.StartingPosition, err = r.str(lookup(p, "StartingPosition"), "StartingPosition"); err != nil {
		return src, err
	}
	if src.StartingPosition != "TRIM_HORIZON" && src.StartingPosition != "LATEST" {
		return src, fmt.Errorf("StartingPosition %q: want TRIM_HORIZON or LATEST", src.StartingPosition)
	}
	if v, ok, err := r.intIn(p, "BatchSize", 1, 10000); err != nil {
		return src, err
	} else if ok {
		src.BatchSize = int(v)
	}
	if v, ok, err := r.intIn(p, "MaximumRetryAttempts", -1, 10000); err != nil {
		return src, err
	} else if ok {
		src.MaximumRetryAttempts = int(v)
	}
	if v, _, err := r.intIn(p, "MaximumBatchingWindowInSeconds", 0, 300); err != nil {
		return src, err
	} else {
		src.MaximumBatchingWindow = time.Duration(v) * time.Second
	}
	// -1 (no limit), or 60 s to 7 days.
	if v, ok, err := r.intIn(p, "MaximumRecordAgeInSeconds", -1, 604800); err != nil {
		return src, err
	} else if ok && v != -1 && v < 60 {
		return src, fmt.Errorf("MaximumRecordAgeInSeconds %d: want -1 or 60 to 604800", v)
	} else if v > 0 {
		src.MaximumRecordAge = time.Duration(v) * time.Second
	}
	if n := lookup(p, "BisectBatchOnFunctionError"); n != nil {
		if src.BisectBatchOnFunctionError, err = r.boolean(n, "BisectBatchOnFunctionError"); err != nil {
			return src, err
		}
	}
	if src.ReportBatchItemFailures, err = r.reportBatchItemFailures(p); err != nil {
		return src, err
	}
	dest, err := r.object(lookup(p, "DestinationConfig"), "DestinationConfig")
	if err != nil {
		return src, err
	}
	if src.OnFailureQueue, err = r.onFailureQueue(dest); err != nil {
		return src, err
	}
	criteria, err := r.object(lookup(p, "FilterCriteria"), "FilterCriteria")
	if err != nil {
		return src, err
	}
	filters, err := r.list(lookup(criteria, "Filters"), "FilterCriteria.Filters")
	if err != nil {
		return src, err
	}
	for i, f := range filters {
		what := fmt.Sprintf("FilterCriteria.Filters[%d].Pattern", i)
		pattern, err := r.str(lookup(f, "Pattern"), what)
		if err != nil {
			return src, err
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(pattern), &obj); err != nil {
			return src, fmt.Errorf("%s: not a JSON object: %v", what, err)
		}
		src.Filters = append(src.Filters, pattern)
	}
	return src, nil
}

// reportBatchItemFailures reads FunctionResponseTypes, whose only value
// is ReportBatchItemFailures (for streams and queues alike).
func (r resolver) reportBatchItemFailures(p *yaml.Node) (bool, error) {
	types, err := r.list(lookup(p, "FunctionResponseTypes"), "FunctionResponseTypes")
	if err != nil {
		return false, err
	}
	for i, n := range types {
		v, err := r.str(n, fmt.Sprintf("FunctionResponseTypes[%d]", i))
		if err != nil {
			return false, err
		}
		if v != "ReportBatchItemFailures" {
			return false, fmt.Errorf("FunctionResponseTypes[%d] %q: want ReportBatchItemFailures", i, v)
		}
	}
	return len(types) > 0, nil
}

// intIn reads the whole number p[key] within [min, max]; ok is false when
// the template leaves it out.
func (r resolver) intIn(p *yaml.Node, key string, min, max int64) (v int64, ok bool, err error) {
	n := lookup(p, key)
	if n == nil {
		return 0, false, nil
	}
	if v, err = r.integer(n, key); err != nil {
		return 0, false, err
	}
	if v < min || v > max {
		return 0, false, fmt.Errorf("%s %d: want %d to %d", key, v, min, max)
	}
	return v, true, nil
}

// getAttOf reads `!GetAtt <LogicalID>.<attr>` where LogicalID is a resource
// of type typ, and returns the logical ID: locally the resource is known by
// it, not by a deploy-time ARN.
func (r resolver) getAttOf(n *yaml.Node, what, attr, typ string) (string, error) {
	n = deref(n)
	if n == nil {
		return "", fmt.Errorf("%s: missing value", what)
	}
	name, arg, ok := intrinsic(n)
	if !ok || name != "Fn::GetAtt" {
		return "", fmt.Errorf("%s (%s): want !GetAtt <%s>.%s", what, where(n), typ, attr)
	}
	key, err := getAttKey(arg)
	if err != nil {
		return "", fmt.Errorf("%s (%s): %w", what, where(n), err)
	}
	id, got, _ := strings.Cut(key, ".")
	if got != attr {
		return "", fmt.Errorf("%s (%s): !GetAtt %s: want the %s attribute", what, where(n), key, attr)
	}
	res, ok := r.t.byID[id]
	if !ok || res.typ != typ {
		return "", fmt.Errorf("%s (%s): !GetAtt %s: %s is not a %s of this template", what, where(n), key, id, typ)
	}
	return id, nil
}

// EventBus is an AWS::Events::EventBus resource.
type EventBus struct {
	LogicalID string
	Name      string // Name, evaluated (AWS::StackName is "local")
}

// EventBuses returns every AWS::Events::EventBus in template order.
func (t *Template) EventBuses() ([]EventBus, error) {
	var out []EventBus
	r := resolver{t: t}
	for _, res := range t.resources {
		if res.typ != TypeEventsEventBus {
			continue
		}
		name, err := r.str(lookup(res.props, "Name"), "event bus "+res.id+" Name")
		if err != nil {
			return nil, err
		}
		if name == "" {
			return nil, fmt.Errorf("event bus %s: Name is required", res.id)
		}
		out = append(out, EventBus{LogicalID: res.id, Name: name})
	}
	return out, nil
}

// FunctionTimeout is a function's Timeout (its own, else Globals.Function's,
// else Lambda's default of 3 s).
func (t *Template) FunctionTimeout(logicalID string) (time.Duration, error) {
	res, ok := t.byID[logicalID]
	if !ok {
		return 0, fmt.Errorf("no resource %s in template", logicalID)
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
