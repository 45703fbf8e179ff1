package template

import (
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// Issue 23's pieces of template.yaml: the placement queue, its dead-letter
// queue, the worker and its event source, the queue timeout. These pin
// what would fail silently once deployed: a worker configured unlike the
// allocate function, a queue without a redrive, a visibility timeout
// shorter than the worker's run.

func TestRepoTemplatePlacementQueues(t *testing.T) {
	tpl := loadRepoTemplate(t)
	queues, err := tpl.Queues()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Queue{}
	for _, q := range queues {
		byID[q.LogicalID] = q
	}
	work, dead := byID["PlacementQueue"], byID["PlacementDeadLetterQueue"]
	if want := (&Redrive{DeadLetterQueue: "PlacementDeadLetterQueue", MaxReceiveCount: 5}); !reflect.DeepEqual(work.Redrive, want) {
		t.Errorf("PlacementQueue RedrivePolicy = %+v, want %+v", work.Redrive, want)
	}
	timeout, err := tpl.FunctionTimeout("PlacementFunction")
	if err != nil {
		t.Fatal(err)
	}
	if work.VisibilityTimeout != 6*timeout {
		t.Errorf("PlacementQueue VisibilityTimeout = %v, want 6x PlacementFunction's Timeout %v (AWS's advice for an SQS event source)", work.VisibilityTimeout, timeout)
	}
	if work.MessageRetention < 600*time.Second {
		t.Errorf("PlacementQueue MessageRetentionPeriod = %v, shorter than the longest queue timeout", work.MessageRetention)
	}
	// A moved message keeps its enqueue time: a shorter DLQ retention
	// would drop it at once.
	if dead.MessageRetention != 14*24*time.Hour || dead.Redrive != nil {
		t.Errorf("PlacementDeadLetterQueue = %+v, want 14 days' retention and no redrive", dead)
	}
	for _, id := range []string{"PlacementQueue", "PlacementDeadLetterQueue"} {
		if sse := lookup(tpl.byID[id].props, "SqsManagedSseEnabled"); !isPlainScalar(sse) || sse.Value != "true" {
			t.Errorf("%s: SqsManagedSseEnabled must be true", id)
		}
	}
}

func TestRepoTemplatePlacementEventSource(t *testing.T) {
	tpl := loadRepoTemplate(t)
	got, err := tpl.SQSEventSources(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []SQSEventSource{{
		FunctionLogicalID: "PlacementFunction", EventName: "QueuedPlacements", QueueLogicalID: "PlacementQueue",
		BatchSize: 10, ReportBatchItemFailures: true, Enabled: true, MaximumConcurrency: 10,
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SQS event sources:\n got %+v\nwant %+v", got, want)
	}
}

// The worker runs the allocation use case: every setting the allocate
// function has, with the same values, and the queue's URL.
func TestRepoTemplatePlacementFunctionEnvMatchesAllocate(t *testing.T) {
	tpl := loadRepoTemplate(t)
	refs := map[string]string{"PlacementQueue": "http://sqs.local/q/PlacementQueue"}
	for _, id := range append(tpl.LogicalIDs(TypeDynamoDBTable), tpl.LogicalIDs(TypeSQSQueue)...) {
		if refs[id] == "" {
			refs[id] = id
		}
	}
	for _, p := range []string{"GameFabricUrl", "GameFabricAllocatePath", "AllocatorTokenSecretArn", "PingTokenSecretArn", "BackendAddress"} {
		refs[p] = "value-of-" + p
	}
	allocate, err := tpl.FunctionEnv("AllocateFunction", refs)
	if err != nil {
		t.Fatal(err)
	}
	placement, err := tpl.FunctionEnv("PlacementFunction", refs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(placement, allocate) {
		t.Errorf("PlacementFunction's environment differs from AllocateFunction's:\n placement %v\n allocate  %v", placement, allocate)
	}
	if allocate["QUEUE_TIMEOUT"] != "0s" || allocate["PLACEMENT_QUEUE_URL"] != refs["PlacementQueue"] {
		t.Errorf("QUEUE_TIMEOUT %q, PLACEMENT_QUEUE_URL %q; want 0s and PlacementQueue's URL", allocate["QUEUE_TIMEOUT"], allocate["PLACEMENT_QUEUE_URL"])
	}
}

// The worker may do what the allocate function does, and both may only
// send to PlacementQueue: no other function touches it.
func TestRepoTemplatePlacementPolicies(t *testing.T) {
	tpl := loadRepoTemplate(t)
	allocate, placement := grantsOf(t, tpl, "AllocateFunction"), grantsOf(t, tpl, "PlacementFunction")
	send := "sqs:SendMessage on !GetAtt PlacementQueue.Arn"
	if !reflect.DeepEqual(placement, allocate) {
		t.Errorf("PlacementFunction's grants differ from AllocateFunction's:\n placement %v\n allocate  %v", placement, allocate)
	}
	if !contains(allocate, send) {
		t.Errorf("AllocateFunction may not %s", send)
	}
	for _, fn := range tpl.LogicalIDs(TypeServerlessFunction) {
		if fn == "AllocateFunction" || fn == "PlacementFunction" || fn == "MatchmakingFunction" || fn == "GameLiftApiFunction" {
			continue
		}
		for _, g := range grantsOf(t, tpl, fn) {
			if strings.Contains(g, "PlacementQueue") {
				t.Errorf("%s: %s", fn, g)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// grantsOf lists a function's inline grants as "<action> on <resource>",
// the resource in its template form, sorted.
func grantsOf(t *testing.T, tpl *Template, fn string) []string {
	t.Helper()
	var out []string
	for _, policy := range items(lookup(tpl.byID[fn].props, "Policies")) {
		for _, st := range items(lookup(policy, "Statement")) {
			res, err := yaml.Marshal(deref(lookup(st, "Resource")))
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range items(lookup(st, "Action")) {
				out = append(out, deref(a).Value+" on "+strings.TrimSpace(string(res)))
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestRepoTemplateQueueTimeoutParameter(t *testing.T) {
	p := repoParameter(t, "QueueTimeout")
	if def := lookup(p, "Default"); !isPlainScalar(def) || def.Value != "0s" {
		t.Errorf("QueueTimeout Default must be 0s (no queueing unless asked for)")
	}
	pattern := lookup(p, "AllowedPattern")
	if !isPlainScalar(pattern) {
		t.Fatal("QueueTimeout needs an AllowedPattern")
	}
	re := regexp.MustCompile(pattern.Value)
	for _, tc := range []struct {
		value string
		ok    bool
	}{
		{"0s", true}, {"0", true}, {"1s", true}, {"90s", true}, {"600s", true},
		{"2m", true}, {"10m", true}, {"1m30s", true}, {"9m59s", true}, {"10m0s", true},
		{"601s", false}, {"11m", false}, {"10m1s", false}, {"9m60s", false}, {"1h", false},
		{"", false}, {"-1s", false}, {"1.5s", false}, {"05s", false}, {"30", false},
	} {
		if got := re.MatchString(tc.value); got != tc.ok {
			t.Errorf("QueueTimeout %q allowed = %v, want %v", tc.value, got, tc.ok)
		}
		if d, err := time.ParseDuration(tc.value); tc.ok && (err != nil || d < 0 || d > 600*time.Second) {
			t.Errorf("QueueTimeout %q is allowed but is no duration of 0s-600s (%v, %v)", tc.value, d, err)
		}
	}
}

func TestRepoTemplatePlacementAlarms(t *testing.T) {
	tpl := loadRepoTemplate(t)
	for _, tc := range []struct{ alarm, metric, queue string }{
		{"PlacementDeadLetterAlarm", "ApproximateNumberOfMessagesVisible", "PlacementDeadLetterQueue"},
		{"PlacementQueueAgeAlarm", "ApproximateAgeOfOldestMessage", "PlacementQueue"},
	} {
		res := tpl.byID[tc.alarm]
		if res == nil || res.typ != typeAlarm {
			t.Errorf("no alarm %s", tc.alarm)
			continue
		}
		if ns, m := lookup(res.props, "Namespace"), lookup(res.props, "MetricName"); ns.Value != "AWS/SQS" || m.Value != tc.metric {
			t.Errorf("%s watches %s %s, want AWS/SQS %s", tc.alarm, ns.Value, m.Value, tc.metric)
		}
		dims := items(lookup(res.props, "Dimensions"))
		name, arg, ok := intrinsic(lookup(firstOr(dims), "Value"))
		if key, err := getAttKey(arg); len(dims) != 1 || !ok || name != "Fn::GetAtt" || err != nil || key != tc.queue+".QueueName" {
			t.Errorf("%s: Dimensions must be QueueName = !GetAtt %s.QueueName", tc.alarm, tc.queue)
		}
	}
}

func firstOr(nodes []*yaml.Node) *yaml.Node {
	if len(nodes) == 0 {
		return nil
	}
	return nodes[0]
}
