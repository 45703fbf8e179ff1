package template

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Issue 14's pieces of template.yaml: the streams, the EventsFunction's
// event sources, the alarms and the dashboard. These pin the properties
// whose loss would fail silently in production (a dropped poison record, an
// alarm that notifies nobody, a dashboard graphing a metric nothing emits).

const typeAlarm = "AWS::CloudWatch::Alarm"

// metricNamespace is shared/metrics.Namespace.
const metricNamespace = "GameFabricAllocator"

// emittedMetrics are the metric names shared/metrics writes in
// metricNamespace: the issue 14 contract's list (/work/contract/issue14.md,
// "Metrics"), plus the two the allocate function emitted before it. Keep in
// step with shared/metrics; an alarm or widget on any other name would watch
// a metric that never exists.
var emittedMetrics = map[string]bool{
	// Issue 14 contract.
	"Allocations":            true,
	"AllocationFailed":       true,
	"NoCapacity":             true,
	"FallbacksUsed":          true,
	"AllocationLatency":      true,
	"SuspectedOrphans":       true,
	"UpstreamLatency":        true,
	"LinkTime":               true,
	"GameInstancesUnhealthy": true,
	"EventsPublished":        true,
	"EventsPublishFailed":    true,
	"UnhealthyRegions":       true,
	// Emitted before issue 14 (shared/metrics/allocation.go).
	"AttemptsPerAllocation":   true,
	"RegionsSkippedUnhealthy": true,
	// Rooms (issue 22): shared/metrics/allocation.go and rooms.go.
	"RoomPlacements":       true,
	"RoomCallbackLatency":  true,
	"RoomsInUse":           true,
	"RoomsFree":            true,
	"GameServersAccepting": true,
}

func loadRepoTemplate(t *testing.T) *Template {
	t.Helper()
	tpl, err := Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

// repoParameter returns the Parameters entry name of template.yaml (the
// parser keeps only defaults, and the bounds matter here).
func repoParameter(t *testing.T, name string) *yaml.Node {
	t.Helper()
	data, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	p := lookup(lookup(doc.Content[0], "Parameters"), name)
	if p == nil {
		t.Fatalf("template.yaml has no parameter %s", name)
	}
	return p
}

// items returns a sequence's entries (nil for anything else).
func items(n *yaml.Node) []*yaml.Node {
	if n = deref(n); n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

func refName(n *yaml.Node) string {
	if name, arg, ok := intrinsic(n); ok && name == "Ref" && isPlainScalar(arg) {
		return arg.Value
	}
	return ""
}

func TestRepoTemplateStreamsCarryBothImages(t *testing.T) {
	tpl := loadRepoTemplate(t)
	for _, table := range []string{"GameInstancesTable", "RegionHealthTable"} {
		t.Run(table, func(t *testing.T) {
			res := tpl.byID[table]
			if res == nil || res.typ != TypeDynamoDBTable {
				t.Fatalf("no table %s", table)
			}
			view := lookup(lookup(res.props, "StreamSpecification"), "StreamViewType")
			if !isPlainScalar(view) || view.Value != "NEW_AND_OLD_IMAGES" {
				t.Errorf("StreamSpecification.StreamViewType must be NEW_AND_OLD_IMAGES (events compare old and new state)")
			}
		})
	}
}

// TestRepoTemplateStreamFailuresAreSetAside: a record that keeps failing
// is retried a bounded number of times, alone (bisect, batch item
// failures), then recorded in a queue -- never retried forever, holding
// back its shard, and never dropped without a trace.
func TestRepoTemplateStreamFailuresAreSetAside(t *testing.T) {
	tpl := loadRepoTemplate(t)
	r := resolver{t: tpl}
	sources := map[string]*yaml.Node{}
	if err := r.eachEvent("DynamoDB", func(fn, event string, props *yaml.Node) error {
		sources[fn+"."+event] = props
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		source, table string
	}{
		{"EventsFunction.GameInstancesStream", "GameInstancesTable"},
		{"EventsFunction.RegionHealthStream", "RegionHealthTable"},
	}
	var want, got []string
	for _, c := range cases {
		want = append(want, c.source)
	}
	for s := range sources {
		got = append(got, s)
	}
	sort.Strings(want)
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DynamoDB event sources = %v, want %v", got, want)
	}

	for _, c := range cases {
		t.Run(c.source, func(t *testing.T) {
			props := sources[c.source]
			if props == nil {
				t.Fatal("missing")
			}
			if name, arg, ok := intrinsic(lookup(props, "Stream")); !ok || name != "Fn::GetAtt" {
				t.Errorf("Stream is not a !GetAtt")
			} else if key, err := getAttKey(arg); err != nil || key != c.table+".StreamArn" {
				t.Errorf("Stream = !GetAtt %s (%v), want %s.StreamArn", key, err, c.table)
			}
			var types []string
			for _, n := range items(lookup(props, "FunctionResponseTypes")) {
				types = append(types, deref(n).Value)
			}
			if !reflect.DeepEqual(types, []string{"ReportBatchItemFailures"}) {
				t.Errorf("FunctionResponseTypes = %v, want [ReportBatchItemFailures]", types)
			}
			if bisect, err := r.boolean(lookup(props, "BisectBatchOnFunctionError"), "BisectBatchOnFunctionError"); err != nil || !bisect {
				t.Errorf("BisectBatchOnFunctionError = %v (%v), want true", bisect, err)
			}
			checkBoundedRetries(t, lookup(props, "MaximumRetryAttempts"))
			if age, err := r.integer(lookup(props, "MaximumRecordAgeInSeconds"), "MaximumRecordAgeInSeconds"); err != nil || age < 60 || age > 86400 {
				t.Errorf("MaximumRecordAgeInSeconds = %d (%v), want 60..86400 (-1 or more than the stream's 24 h keeps a record forever)", age, err)
			}
			onFailure := lookup(lookup(props, "DestinationConfig"), "OnFailure")
			if typ := lookup(onFailure, "Type"); !isPlainScalar(typ) || typ.Value != "SQS" {
				t.Errorf("DestinationConfig.OnFailure.Type must be SQS (SAM then grants sqs:SendMessage)")
			}
			if name, arg, ok := intrinsic(lookup(onFailure, "Destination")); !ok || name != "Fn::GetAtt" {
				t.Errorf("DestinationConfig.OnFailure.Destination is not a !GetAtt")
			} else if key, err := getAttKey(arg); err != nil || key != "EventsDLQ.Arn" {
				t.Errorf("DestinationConfig.OnFailure.Destination = !GetAtt %s (%v), want EventsDLQ.Arn", key, err)
			}
			filters := items(lookup(lookup(props, "FilterCriteria"), "Filters"))
			if len(filters) == 0 {
				t.Fatal("no FilterCriteria.Filters: every heartbeat would invoke the function")
			}
			for i, f := range filters {
				p := lookup(f, "Pattern")
				var v map[string]any
				if !isPlainScalar(p) || json.Unmarshal([]byte(p.Value), &v) != nil {
					t.Errorf("Filters[%d].Pattern must be a JSON object in a string", i)
				}
			}
		})
	}
}

// checkBoundedRetries accepts a literal or a parameter whose default and
// bounds keep MaximumRetryAttempts in 0..10000 (-1, Lambda's default for
// streams, retries until the record expires).
func checkBoundedRetries(t *testing.T, n *yaml.Node) {
	t.Helper()
	inRange := func(s string) bool {
		v, err := strconv.Atoi(s)
		return err == nil && v >= 0 && v <= 10000
	}
	if isPlainScalar(n) {
		if !inRange(n.Value) {
			t.Errorf("MaximumRetryAttempts = %q, want 0..10000", n.Value)
		}
		return
	}
	param := refName(n)
	if param == "" {
		t.Errorf("MaximumRetryAttempts must be a literal or a !Ref to a parameter")
		return
	}
	p := repoParameter(t, param)
	for _, key := range []string{"Default", "MinValue", "MaxValue"} {
		if v := lookup(p, key); !isPlainScalar(v) {
			t.Errorf("parameter %s needs a literal %s in 0..10000", param, key)
		} else if !inRange(v.Value) {
			t.Errorf("parameter %s: %s = %s, want 0..10000", param, key, v.Value)
		}
	}
}

func TestRepoTemplateAlarmsNotifyTheAlarmTopic(t *testing.T) {
	tpl := loadRepoTemplate(t)
	alarms := tpl.LogicalIDs(typeAlarm)
	for _, want := range []string{
		"AllocationFailureRateAlarm", "NoCapacityRateAlarm", "FallbackRateAlarm",
		"RegionUnhealthyAlarm", "SuspectedOrphansAlarm",
		"HealthSweepErrorsAlarm", "PingRefreshErrorsAlarm", "EventsFunctionErrorsAlarm",
		"EventsIteratorAgeAlarm", "EventsDLQDepthAlarm", "ScheduledFunctionsDLQDepthAlarm",
		"ApiThrottlesAlarm", "Api5xxAlarm",
		"PlacementDeadLetterAlarm", "PlacementQueueAgeAlarm",
	} {
		if res, ok := tpl.byID[want]; !ok || res.typ != typeAlarm {
			t.Errorf("no alarm %s", want)
		}
	}
	for _, id := range alarms {
		t.Run(id, func(t *testing.T) {
			props := tpl.byID[id].props
			for _, key := range []string{"AlarmActions", "OKActions"} {
				if err := alarmTopicIf(lookup(props, key)); err != "" {
					t.Errorf("%s: %s; want !If [HasAlarmTopic, [!Ref AlarmTopicArn], !Ref AWS::NoValue]", key, err)
				}
			}
			switch tmd := lookup(props, "TreatMissingData"); {
			case !isPlainScalar(tmd):
				t.Errorf("TreatMissingData must be chosen explicitly")
			case tmd.Value != "breaching" && tmd.Value != "notBreaching" && tmd.Value != "ignore" && tmd.Value != "missing":
				t.Errorf("TreatMissingData = %q", tmd.Value)
			}
			if d := lookup(props, "AlarmDescription"); !isPlainScalar(d) || len(strings.TrimSpace(d.Value)) < 20 {
				t.Errorf("AlarmDescription must say what went wrong")
			}
		})
	}
}

// alarmTopicIf returns what is wrong with n, or "".
func alarmTopicIf(n *yaml.Node) string {
	name, arg, ok := intrinsic(n)
	if !ok || name != "Fn::If" {
		return "not an !If"
	}
	arg = deref(arg)
	if arg.Kind != yaml.SequenceNode || len(arg.Content) != 3 {
		return "!If needs three arguments"
	}
	if c := deref(arg.Content[0]); !isPlainScalar(c) || c.Value != "HasAlarmTopic" {
		return "condition is not HasAlarmTopic"
	}
	if l := deref(arg.Content[1]); l.Kind != yaml.SequenceNode || len(l.Content) != 1 || refName(l.Content[0]) != "AlarmTopicArn" {
		return "true branch is not [!Ref AlarmTopicArn]"
	}
	if refName(arg.Content[2]) != "AWS::NoValue" {
		return "false branch is not !Ref AWS::NoValue"
	}
	return ""
}

// searchMetric finds the MetricName="..." of a SEARCH() over namespace.
var searchMetric = regexp.MustCompile(`\{` + metricNamespace + `(,[^}]*)?\}[^']*MetricName="([^"]+)"`)

// namespaceMetrics returns the metric names expr's SEARCH() calls over
// metricNamespace, and whether it searches the namespace without naming a
// metric (which would graph whatever appears there).
func namespaceMetrics(expr string) (names []string, unnamed bool) {
	for _, m := range searchMetric.FindAllStringSubmatch(expr, -1) {
		names = append(names, m[2])
	}
	return names, strings.Contains(expr, "{"+metricNamespace) && len(names) == 0
}

func TestRepoTemplateMetricNamesAreEmitted(t *testing.T) {
	tpl := loadRepoTemplate(t)
	used := map[string][]string{} // metric name -> where
	use := func(where, name string) { used[name] = append(used[name], where) }

	// Alarms: a single metric, or metric math over MetricStats and SEARCHes.
	for _, id := range tpl.LogicalIDs(typeAlarm) {
		props := tpl.byID[id].props
		if ns := lookup(props, "Namespace"); isPlainScalar(ns) && ns.Value == metricNamespace {
			use(id, lookup(props, "MetricName").Value)
		}
		for _, q := range items(lookup(props, "Metrics")) {
			m := lookup(lookup(q, "MetricStat"), "Metric")
			if ns := lookup(m, "Namespace"); isPlainScalar(ns) && ns.Value == metricNamespace {
				use(id, lookup(m, "MetricName").Value)
			}
			if e := lookup(q, "Expression"); isPlainScalar(e) {
				names, unnamed := namespaceMetrics(e.Value)
				if unnamed {
					t.Errorf("%s: SEARCH over %s without a MetricName: %s", id, metricNamespace, e.Value)
				}
				for _, n := range names {
					use(id, n)
				}
			}
		}
	}

	// Dashboards: the JSON body behind !Sub.
	dashboards := tpl.LogicalIDs("AWS::CloudWatch::Dashboard")
	if len(dashboards) == 0 {
		t.Fatal("no dashboard")
	}
	for _, id := range dashboards {
		body := dashboardBody(t, tpl, id)
		for i, w := range body.Widgets {
			where := id + " widget " + strconv.Itoa(i) + " (" + w.Properties.Title + ")"
			ns := ""
			for _, row := range w.Properties.Metrics {
				if len(row) == 0 {
					continue
				}
				if opts, ok := row[0].(map[string]any); ok {
					expr, _ := opts["expression"].(string)
					names, unnamed := namespaceMetrics(expr)
					if unnamed {
						t.Errorf("%s: SEARCH over %s without a MetricName: %s", where, metricNamespace, expr)
					}
					for _, n := range names {
						use(where, n)
					}
					continue
				}
				// [namespace, name, dim, value, ..., {options}], where "."
				// repeats the row above's value.
				if first, _ := row[0].(string); first != "." {
					ns = first
				}
				if ns != metricNamespace {
					continue
				}
				if name, _ := row[1].(string); name != "" && name != "." {
					use(where, name)
				} else {
					t.Errorf("%s: spell out each %s metric name", where, metricNamespace)
				}
			}
		}
	}

	if len(used) == 0 {
		t.Fatalf("no %s metric is used by any alarm or dashboard", metricNamespace)
	}
	for name, where := range used {
		if !emittedMetrics[name] {
			t.Errorf("%s uses %s/%s, which shared/metrics does not emit (contract list)", strings.Join(where, ", "), metricNamespace, name)
		}
	}
}

// TestRepoTemplateDashboardShowsEveryAlarm: the alarm widget lists every
// alarm of the stack, so a new alarm cannot be forgotten there.
func TestRepoTemplateDashboardShowsEveryAlarm(t *testing.T) {
	tpl := loadRepoTemplate(t)
	var listed []string
	for _, id := range tpl.LogicalIDs("AWS::CloudWatch::Dashboard") {
		for _, w := range dashboardBody(t, tpl, id).Widgets {
			if w.Type == "alarm" {
				listed = append(listed, w.Properties.Alarms...)
			}
		}
	}
	var want []string
	for _, id := range tpl.LogicalIDs(typeAlarm) {
		want = append(want, "${"+id+".Arn}")
	}
	sort.Strings(listed)
	sort.Strings(want)
	if !reflect.DeepEqual(listed, want) {
		t.Errorf("alarm widgets list %v, want %v", listed, want)
	}
}

type dashboard struct {
	Widgets []struct {
		Type       string `json:"type"`
		Properties struct {
			Title   string  `json:"title"`
			Metrics [][]any `json:"metrics"`
			Alarms  []string
		} `json:"properties"`
	} `json:"widgets"`
}

// dashboardBody decodes a dashboard's DashboardBody, a !Sub string. The
// ${...} placeholders sit inside JSON strings, so the body decodes as is.
func dashboardBody(t *testing.T, tpl *Template, id string) dashboard {
	t.Helper()
	name, arg, ok := intrinsic(lookup(tpl.byID[id].props, "DashboardBody"))
	if !ok || name != "Fn::Sub" || !isPlainScalar(arg) {
		t.Fatalf("%s: DashboardBody must be a !Sub string", id)
	}
	var d dashboard
	if err := json.Unmarshal([]byte(arg.Value), &d); err != nil {
		t.Fatalf("%s: DashboardBody is not JSON: %v", id, err)
	}
	if len(d.Widgets) == 0 {
		t.Fatalf("%s: no widgets", id)
	}
	return d
}
