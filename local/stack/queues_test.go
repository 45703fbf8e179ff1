package stack

import (
	"reflect"
	"testing"

	"github.com/gamefabric-alloc/allocsvc/local/sqssource"
	"github.com/gamefabric-alloc/allocsvc/local/template"
)

// What the local stack makes of template.yaml's queues and SQS event:
// the settings moto's queues get and the mapping polling them.
func TestQueuesFromTheRepoTemplate(t *testing.T) {
	tpl, err := LoadTemplate("../..")
	if err != nil {
		t.Fatal(err)
	}
	queues, err := tpl.Queues()
	if err != nil {
		t.Fatal(err)
	}
	c := &Components{Template: tpl, Queues: map[string]string{}, QueueARNs: map[string]string{}}
	attrs := map[string]map[string]string{}
	for _, q := range queues {
		c.Queues[q.LogicalID] = "http://moto/123456789012/" + q.LogicalID
		c.QueueARNs[q.LogicalID] = "arn:aws:sqs:us-east-1:123456789012:" + q.LogicalID
		attrs[q.LogicalID] = queueAttributes(q)
	}
	for id, want := range map[string]map[string]string{
		"PlacementQueue":           {"VisibilityTimeout": "180", "MessageRetentionPeriod": "3600", "DelaySeconds": "0"},
		"PlacementDeadLetterQueue": {"VisibilityTimeout": "30", "MessageRetentionPeriod": "1209600", "DelaySeconds": "0"},
	} {
		if !reflect.DeepEqual(attrs[id], want) {
			t.Errorf("%s attributes %v, want %v", id, attrs[id], want)
		}
	}

	sources, err := tpl.SQSEventSources(nil)
	if err != nil || len(sources) != 1 {
		t.Fatalf("SQS event sources %+v, %v; want PlacementFunction's", sources, err)
	}
	got, err := c.QueueSourceConfig(sources[0])
	want := sqssource.Config{
		Function: "PlacementFunction", QueueURL: c.Queues["PlacementQueue"], QueueARN: c.QueueARNs["PlacementQueue"],
		Region: "us-east-1", BatchSize: 10, ReportBatchItemFailures: true,
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("QueueSourceConfig = %+v, %v\nwant %+v", got, err, want)
	}
	if _, err := c.QueueSourceConfig(template.SQSEventSource{FunctionLogicalID: "F", EventName: "E", QueueLogicalID: "Nowhere"}); err == nil {
		t.Error("a queue the stack did not create was accepted")
	}
}
