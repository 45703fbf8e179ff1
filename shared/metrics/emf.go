// Package metrics writes CloudWatch Embedded Metric Format (EMF) lines to
// stdout: CloudWatch turns them into metrics with no API call, so emitting
// costs nothing on the request path.
package metrics

import (
	"io"
	"math"
	"sort"
	"strconv"
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
// The line is built by hand, byte for byte what encoding/json makes of
// the document (for names and values in ASCII) (its keys in byte order, as for a map; "_aws" last, after
// the capitalised names): it runs on every allocation, and reflection over
// maps of any was a tenth of the allocate path's allocations.
func (e *EMF) EmitGroups(dims map[string]string, groups ...Group) {
	type field struct {
		key   string
		value string   // a dimension's
		num   *float64 // a metric's
	}
	fields := make([]field, 0, len(dims)+8)
	for k, v := range dims {
		fields = append(fields, field{key: k, value: v})
	}
	n := 0
	for _, g := range groups {
		for i := range g.Metrics {
			if v := g.Metrics[i].Value; math.IsNaN(v) || math.IsInf(v, 0) {
				return // no JSON for it: the line is dropped, as encoding/json refused it
			}
			fields = append(fields, field{key: g.Metrics[i].Name, num: &g.Metrics[i].Value})
		}
		n += len(g.Metrics)
	}
	if n == 0 {
		return
	}
	sort.Slice(fields, func(i, j int) bool { return fields[i].key < fields[j].key })
	b := make([]byte, 0, 512)
	b = append(b, '{')
	for _, f := range fields {
		b = appendString(b, f.key)
		b = append(b, ':')
		if f.num != nil {
			b = appendNumber(b, *f.num)
		} else {
			b = appendString(b, f.value)
		}
		b = append(b, ',')
	}
	b = append(b, `"_aws":{"CloudWatchMetrics":[`...)
	first := true
	for _, g := range groups {
		if len(g.Metrics) == 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `{"Namespace":"`+Namespace+`","Dimensions":[`...)
		for i, set := range g.DimensionSets {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			for j, d := range set {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendString(b, d)
			}
			b = append(b, ']')
		}
		b = append(b, `],"Metrics":[`...)
		for i, m := range g.Metrics {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"Name":`...)
			b = appendString(b, m.Name)
			b = append(b, `,"Unit":`...)
			b = appendString(b, m.Unit)
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	b = append(b, `],"Timestamp":`...)
	b = strconv.AppendInt(b, e.now().UnixMilli(), 10)
	b = append(b, "}}\n"...)
	e.mu.Lock()
	defer e.mu.Unlock()
	_, _ = e.w.Write(b)
}

// appendNumber writes v as encoding/json writes a float64: 'f' form but
// for the very small and very large, whose exponent loses a leading zero.
func appendNumber(b []byte, v float64) []byte {
	format := byte('f')
	if abs := math.Abs(v); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, v, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}

// appendString writes s as encoding/json writes a string: quotes,
// backslashes and control characters escaped, and <, > and & too (names
// and dimension values are ours or sanitised region labels, but a line must
// stay JSON whatever they hold).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		default:
			if c < 0x20 || c == '<' || c == '>' || c == '&' {
				b = append(b, `\u00`...)
				b = append(b, hex[c>>4], hex[c&0xf])
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}
