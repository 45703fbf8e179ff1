package template

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// SQSEventSource is one `Type: SQS` event of a serverless function: the
// event source mapping Lambda creates from it, with every setting the
// local poller honours. Numbers use Lambda's defaults when the template
// leaves them out.
type SQSEventSource struct {
	FunctionLogicalID string
	EventName         string
	// QueueLogicalID is the queue polled (Queue: !GetAtt <Queue>.Arn).
	QueueLogicalID string
	BatchSize      int // default 10
	// MaximumBatchingWindow is MaximumBatchingWindowInSeconds (default 0).
	MaximumBatchingWindow   time.Duration
	ReportBatchItemFailures bool // FunctionResponseTypes has ReportBatchItemFailures
	Enabled                 bool // default true
	// MaximumConcurrency is ScalingConfig.MaximumConcurrency, 0 when unset.
	MaximumConcurrency int
}

// SQSEventSources returns every SQS event of every serverless function in
// template order, evaluated like DynamoDBEventSources.
func (t *Template) SQSEventSources(refs map[string]string) ([]SQSEventSource, error) {
	var out []SQSEventSource
	r := resolver{t: t, refs: refs}
	err := r.eachEvent("SQS", func(fn, event string, props *yaml.Node) error {
		src, err := r.sqsEventSource(fn, event, props)
		out = append(out, src)
		return err
	})
	return out, err
}

func (r resolver) sqsEventSource(fn, event string, props *yaml.Node) (SQSEventSource, error) {
	src := SQSEventSource{FunctionLogicalID: fn, EventName: event, BatchSize: 10, Enabled: true}
	p, err := r.object(props, "Properties")
	if err != nil || p == nil {
		return src, fmt.Errorf("no Properties: %v", err)
	}
	if src.QueueLogicalID, err = r.getAttOf(lookup(p, "Queue"), "Queue", "Arn", TypeSQSQueue); err != nil {
		return src, err
	}
	// Filtering would have to match bodies as Lambda does; refusing it
	// beats delivering what the deployed mapping would drop.
	if lookup(p, "FilterCriteria") != nil {
		return src, fmt.Errorf("FilterCriteria: SQS filters do not run locally")
	}
	if v, ok, err := r.intIn(p, "BatchSize", 1, 10000); err != nil {
		return src, err
	} else if ok {
		src.BatchSize = int(v)
	}
	if v, _, err := r.intIn(p, "MaximumBatchingWindowInSeconds", 0, 300); err != nil {
		return src, err
	} else {
		src.MaximumBatchingWindow = time.Duration(v) * time.Second
	}
	// Lambda's own rule: more than 10 messages take several receives,
	// which only a batching window lets it gather.
	if src.BatchSize > 10 && src.MaximumBatchingWindow == 0 {
		return src, fmt.Errorf("BatchSize %d: above 10 needs MaximumBatchingWindowInSeconds of at least 1", src.BatchSize)
	}
	if src.ReportBatchItemFailures, err = r.reportBatchItemFailures(p); err != nil {
		return src, err
	}
	if n := lookup(p, "Enabled"); n != nil {
		if src.Enabled, err = r.boolean(n, "Enabled"); err != nil {
			return src, err
		}
	}
	scaling, err := r.object(lookup(p, "ScalingConfig"), "ScalingConfig")
	if err != nil {
		return src, err
	}
	if v, _, err := r.intIn(scaling, "MaximumConcurrency", 2, 1000); err != nil {
		return src, fmt.Errorf("ScalingConfig.%w", err)
	} else {
		src.MaximumConcurrency = int(v)
	}
	return src, nil
}
