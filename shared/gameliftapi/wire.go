package gameliftapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/aws/smithy-go/encoding/cbor"
)

// The two protocols carry the same data model; this file is its one
// translation. A request body becomes a tree of plain values (decode), and
// an answer is built as one (obj) and written in either protocol. Answers
// need the model's types, which JSON alone cannot tell: a timestamp is
// epoch seconds in JSON and a tag-1 value in CBOR, a float32 member must be
// a CBOR float32 (the Go SDK refuses a float64 there) and an integer a CBOR
// integer.

// Protocol is how a request came and its answer goes.
type Protocol int

const (
	// JSON11 is AWS JSON 1.1 (botocore, the AWS CLI): POST, X-Amz-Target.
	JSON11 Protocol = iota
	// CBOR is Smithy RPC v2 CBOR (aws-sdk-go-v2/service/gamelift).
	CBOR
)

// member is one member of an answer's structure, in order.
type member struct {
	name  string
	value any // string, int64, float32, time.Time, []any, obj
}

// obj is a structure of an answer; members with a zero value are left out
// by whoever builds it.
type obj []member

// encode writes v in p's format.
func encode(p Protocol, v obj) []byte {
	if p == CBOR {
		return cbor.Encode(toCBOR(v))
	}
	var b bytes.Buffer
	writeJSON(&b, v)
	return b.Bytes()
}

func toCBOR(v any) cbor.Value {
	switch v := v.(type) {
	case obj:
		m := cbor.Map{}
		for _, f := range v {
			m[f.name] = toCBOR(f.value)
		}
		return m
	case []any:
		l := cbor.List{}
		for _, e := range v {
			l = append(l, toCBOR(e))
		}
		return l
	case string:
		return cbor.String(v)
	case int64:
		if v < 0 {
			return cbor.NegInt(uint64(-v))
		}
		return cbor.Uint(uint64(v))
	case float32:
		return cbor.Float32(v)
	case time.Time:
		return &cbor.Tag{ID: 1, Value: cbor.Float64(float64(v.UnixMilli()) / 1000)}
	}
	panic(fmt.Sprintf("gameliftapi: no CBOR for %T", v))
}

func writeJSON(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case obj:
		b.WriteByte('{')
		for i, f := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, f.name)
			b.WriteByte(':')
			writeJSON(b, f.value)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e)
		}
		b.WriteByte(']')
	case string:
		writeString(b, v)
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case float32:
		b.WriteString(strconv.FormatFloat(float64(v), 'g', -1, 32))
	case time.Time:
		b.WriteString(strconv.FormatFloat(float64(v.UnixMilli())/1000, 'f', -1, 64))
	default:
		panic(fmt.Sprintf("gameliftapi: no JSON for %T", v))
	}
}

func writeString(b *bytes.Buffer, s string) {
	q, _ := json.Marshal(s) // a string cannot fail
	b.Write(q)
}

// errNotProtocol: the body is not the protocol's (not JSON, not CBOR, or
// not a structure).
var errNotProtocol = errors.New("not a structure of the protocol")

// decode reads a request body as p into a tree: map[string]any, []any,
// string, bool, int64 and float64. An empty body is an empty structure.
// Nulls are members left out.
func decode(p Protocol, body []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return map[string]any{}, nil
	}
	var v any
	var err error
	if p == CBOR {
		var cv cbor.Value
		if cv, err = cbor.Decode(body); err == nil {
			v, err = fromCBOR(cv, 0)
		}
	} else {
		v, err = fromJSON(body)
	}
	m, ok := v.(map[string]any)
	if err != nil || !ok {
		return nil, errNotProtocol
	}
	return m, nil
}

func fromJSON(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errNotProtocol
	}
	return numbers(v), nil
}

// numbers turns JSON's numbers into int64 (integers) and float64.
func numbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case map[string]any:
		for k, e := range v {
			v[k] = numbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = numbers(e)
		}
	}
	return v
}

// maxDepth bounds how deep a body nests (the model's inputs nest three).
const maxDepth = 16

func fromCBOR(v cbor.Value, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errNotProtocol
	}
	switch v := v.(type) {
	case cbor.Map:
		m := make(map[string]any, len(v))
		for k, e := range v {
			ev, err := fromCBOR(e, depth+1)
			if err != nil {
				return nil, err
			}
			if ev != nil {
				m[k] = ev
			}
		}
		return m, nil
	case cbor.List:
		l := make([]any, 0, len(v))
		for _, e := range v {
			ev, err := fromCBOR(e, depth+1)
			if err != nil {
				return nil, err
			}
			l = append(l, ev)
		}
		return l, nil
	case cbor.String:
		return string(v), nil
	case cbor.Bool:
		return bool(v), nil
	case cbor.Uint:
		if v > math.MaxInt64 {
			return float64(v), nil
		}
		return int64(v), nil
	case cbor.NegInt:
		if v == 0 || v > math.MaxInt64 {
			return -float64(v), nil
		}
		return -int64(v), nil
	case cbor.Float32:
		return float64(v), nil
	case cbor.Float64:
		return float64(v), nil
	case *cbor.Nil, *cbor.Undefined:
		return nil, nil
	}
	return nil, errNotProtocol
}
