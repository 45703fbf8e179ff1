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
	if len(metrics) == 0 {
		return
	}
	keys := make([]string, 0, len(dims))
	for k := range dims {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	type def struct {
		Name string `json:"Name"`
		Unit string `json:"Unit"`
	}
	defs := make([]def, 0, len(metrics))
	doc := map[string]any{}
	for k, v := range dims {
		doc[k] = v
	}
	for _, m := range metrics {
		defs = append(defs, def{m.Name, m.Unit})
		doc[m.Name] = m.Value
	}
	doc["_aws"] = map[string]any{
		"Timestamp": e.now().UnixMilli(),
		"CloudWatchMetrics": []map[string]any{{
			"Namespace": Namespace, "Dimensions": [][]string{keys}, "Metrics": defs,
		}},
	}
	line, err := json.Marshal(doc)
	if err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_, _ = e.w.Write(append(line, '\n'))
}
