// Package metrics writes CloudWatch Embedded Metric Format (EMF) lines to
// stdout: CloudWatch turns them into metrics with no API call, so emitting
// costs nothing on the request path.
package metrics

import (
	"encoding/json"
	"io"
	"sort"
	"sync"
	"time"
)

// Namespace is where the service's metrics appear in CloudWatch.
const Namespace = "GameFabricAllocator"

// Metric is one value.
type Metric struct {
	Name  string
	Value float64
	Unit  string // CloudWatch unit: "Count", "Milliseconds", ...
}

// Group is metrics published under each of a list of dimension sets (each
// set names dimensions of the line's dimension values; nil is none).
type Group struct {
	DimensionSets [][]string
	Metrics       []Metric
}

// EMF writes one EMF JSON object per line.
type EMF struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
}

// NewEMF writes to w (os.Stdout in a Lambda).
func NewEMF(w io.Writer) *EMF { return &EMF{w: w, now: time.Now} }

// Emit writes metrics under one dimension set (dims may be empty).
func (e *EMF) Emit(dims map[string]string, metrics ...Metric) {
	keys := make([]string, 0, len(dims))
	for k := range dims {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	e.EmitGroups(dims, Group{DimensionSets: [][]string{keys}, Metrics: metrics})
}

// EmitGroups writes one line holding every group: one log line, however
// many metrics and dimension combinations, keeps log ingestion (billed per
// byte) and the handler's work small. A metric name appears in one group.
func (e *EMF) EmitGroups(dims map[string]string, groups ...Group) {
	type def struct {
		Name string `json:"Name"`
		Unit string `json:"Unit"`
	}
	type directive struct {
		Namespace  string     `json:"Namespace"`
		Dimensions [][]string `json:"Dimensions"`
		Metrics    []def      `json:"Metrics"`
	}
	doc := map[string]any{}
	for k, v := range dims {
		doc[k] = v
	}
	var directives []directive
	for _, g := range groups {
		if len(g.Metrics) == 0 {
			continue
		}
		d := directive{Namespace: Namespace, Dimensions: g.DimensionSets, Metrics: make([]def, 0, len(g.Metrics))}
		for i, set := range d.Dimensions {
			if set == nil {
				d.Dimensions[i] = []string{}
			}
		}
		for _, m := range g.Metrics {
			d.Metrics = append(d.Metrics, def{m.Name, m.Unit})
			doc[m.Name] = m.Value
		}
		directives = append(directives, d)
	}
	if len(directives) == 0 {
		return
	}
	doc["_aws"] = map[string]any{"Timestamp": e.now().UnixMilli(), "CloudWatchMetrics": directives}
	line, err := json.Marshal(doc)
	if err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_, _ = e.w.Write(append(line, '\n'))
}
