package template

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// DynamoDBEventSource is one `Type: DynamoDB` event of a serverless
// function: the event source mapping Lambda creates from it, with Lambda's
// defaults where the template leaves a value out.
type DynamoDBEventSource struct {
	FunctionLogicalID     string
	EventName             string
	TableLogicalID        string        `cfn:"Stream,required" getatt:"StreamArn AWS::DynamoDB::Table"`
	StartingPosition      string        `cfn:",required"` // TRIM_HORIZON or LATEST
	BatchSize             int           `range:"1,10000"` // default 100
	MaximumBatchingWindow time.Duration `cfn:"MaximumBatchingWindowInSeconds" range:"0,300"`
	// MaximumRetryAttempts is -1 (the default) for "until the record expires".
	MaximumRetryAttempts       int `range:"-1,10000"`
	BisectBatchOnFunctionError bool
	// MaximumRecordAge is 0 for -1 (the default): no limit.
	MaximumRecordAge        time.Duration `cfn:"MaximumRecordAgeInSeconds" range:"-1,604800"`
	ReportBatchItemFailures bool          // FunctionResponseTypes has ReportBatchItemFailures
	OnFailureQueue          string        // DestinationConfig.OnFailure's queue, or ""
	// Filters are FilterCriteria.Filters[].Pattern, each a JSON object; a
	// record is delivered when any matches (none: every record).
	Filters []string
}

// DynamoDBEventSources returns every DynamoDB event of every serverless
// function in template order, evaluated with refs like FunctionEnv.
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

func (r resolver) dynamoDBEventSource(fn, event string, p *yaml.Node) (DynamoDBEventSource, error) {
	src := DynamoDBEventSource{FunctionLogicalID: fn, EventName: event, BatchSize: 100, MaximumRetryAttempts: -1}
	var criteria struct {
		Filters []struct{ Pattern string }
	}
	err := r.decode(p, "", &src)
	if err == nil {
		err = r.decode(lookup(p, "FilterCriteria"), "FilterCriteria", &criteria)
	}
	if err == nil {
		src.ReportBatchItemFailures, err = r.reportBatchItemFailures(p)
	}
	if err == nil {
		src.OnFailureQueue, err = r.onFailureQueue(lookup(p, "DestinationConfig"))
	}
	switch age := src.MaximumRecordAge; {
	case err != nil:
		return src, err
	case src.StartingPosition != "TRIM_HORIZON" && src.StartingPosition != "LATEST":
		return src, fmt.Errorf("StartingPosition %q: want TRIM_HORIZON or LATEST", src.StartingPosition)
	case age == -time.Second:
		src.MaximumRecordAge = 0
	case age < time.Minute && lookup(p, "MaximumRecordAgeInSeconds") != nil:
		return src, fmt.Errorf("MaximumRecordAgeInSeconds %d: want -1 or 60 to 604800", age/time.Second)
	}
	for i, f := range criteria.Filters {
		var obj map[string]any
		if err := json.Unmarshal([]byte(f.Pattern), &obj); err != nil {
			return src, fmt.Errorf("FilterCriteria.Filters[%d].Pattern: not a JSON object: %v", i, err)
		}
		src.Filters = append(src.Filters, f.Pattern)
	}
	return src, nil
}

// SQSEventSource is one `Type: SQS` event of a serverless function: the
// event source mapping Lambda creates from it, with Lambda's defaults.
type SQSEventSource struct {
	FunctionLogicalID       string
	EventName               string
	QueueLogicalID          string        `cfn:"Queue,required" getatt:"Arn AWS::SQS::Queue"`
	BatchSize               int           `range:"1,10000"` // default 10
	MaximumBatchingWindow   time.Duration `cfn:"MaximumBatchingWindowInSeconds" range:"0,300"`
	ReportBatchItemFailures bool          // FunctionResponseTypes has ReportBatchItemFailures
	Enabled                 bool          // default true
	MaximumConcurrency      int           `cfn:"ScalingConfig.MaximumConcurrency" range:"2,1000"`
}

// SQSEventSources returns every SQS event of every serverless function in
// template order, evaluated like DynamoDBEventSources.
func (t *Template) SQSEventSources(refs map[string]string) ([]SQSEventSource, error) {
	var out []SQSEventSource
	r := resolver{t: t, refs: refs}
	err := r.eachEvent("SQS", func(fn, event string, p *yaml.Node) error {
		src := SQSEventSource{FunctionLogicalID: fn, EventName: event, BatchSize: 10, Enabled: true}
		err := r.decode(p, "", &src)
		if err == nil {
			src.ReportBatchItemFailures, err = r.reportBatchItemFailures(p)
		}
		switch {
		case err != nil:
		// Filtering would have to match bodies as Lambda does; refusing it
		// beats delivering what the deployed mapping would drop.
		case lookup(p, "FilterCriteria") != nil:
			err = fmt.Errorf("FilterCriteria: SQS filters do not run locally")
		// Lambda's own rule: more than 10 messages take several receives,
		// which only a batching window lets it gather.
		case src.BatchSize > 10 && src.MaximumBatchingWindow == 0:
			err = fmt.Errorf("BatchSize %d: above 10 needs MaximumBatchingWindowInSeconds of at least 1", src.BatchSize)
		}
		out = append(out, src)
		return err
	})
	return out, err
}

// reportBatchItemFailures reads FunctionResponseTypes, whose only value
// is ReportBatchItemFailures (for streams and queues alike).
func (r resolver) reportBatchItemFailures(p *yaml.Node) (bool, error) {
	var types []string
	err := r.decode(lookup(p, "FunctionResponseTypes"), "FunctionResponseTypes", &types)
	for i, v := range types {
		if err == nil && v != "ReportBatchItemFailures" {
			err = fmt.Errorf("FunctionResponseTypes[%d] %q: want ReportBatchItemFailures", i, v)
		}
	}
	return len(types) > 0, err
}

// getAttOf reads `!GetAtt <LogicalID>.<attr>` where LogicalID is a resource
// of type typ (either kind of function for "function"), and returns the
// logical ID: locally the resource is known by it, not by a deploy-time ARN.
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
	if !ok || res.typ != typ && (typ != "function" || !isFunction(res.typ)) {
		return "", fmt.Errorf("%s (%s): !GetAtt %s: %s is not a %s of this template", what, where(n), key, id, typ)
	}
	return id, nil
}
