package streams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"
)

// recorder is a Go-func function: it records the sequence numbers of every
// invocation and answers with respond.
type recorder struct {
	mu      sync.Mutex
	calls   [][]string
	respond func(seqs []string) ([]byte, error)
}

func (r *recorder) Invoke(_ context.Context, event []byte) ([]byte, error) {
	var ev Event
	if err := json.Unmarshal(event, &ev); err != nil {
		return nil, err
	}
	var seqs []string
	for _, rec := range ev.Records {
		seqs = append(seqs, rec.DynamoDB.SequenceNumber)
	}
	r.mu.Lock()
	r.calls = append(r.calls, seqs)
	r.mu.Unlock()
	return r.respond(seqs)
}

type memoryDestination struct{ bodies []string }

func (d *memoryDestination) Send(_ context.Context, body string) error {
	d.bodies = append(d.bodies, body)
	return nil
}

func records(n int) []Record {
	var out []Record
	for i := 1; i <= n; i++ {
		out = append(out, Record{EventName: "INSERT", DynamoDB: StreamRecord{SequenceNumber: strconv.Itoa(i * 100), ApproximateCreationDateTime: 1.7e9}})
	}
	return out
}

func mapping(cfg Config, fn Invoker) *Mapping {
	cfg.StreamARN, cfg.FunctionARN = "arn:stream", "arn:function"
	return &Mapping{cfg: cfg, fn: fn, now: func() time.Time { return time.Unix(1.7e9+10, 0) }}
}

func TestProcess(t *testing.T) {
	fails := func(seq ...string) func([]string) ([]byte, error) {
		return func([]string) ([]byte, error) {
			var items []string
			for _, s := range seq {
				items = append(items, fmt.Sprintf(`{"itemIdentifier":%q}`, s))
			}
			return []byte(fmt.Sprintf(`{"batchItemFailures":[%s]}`, joinComma(items))), nil
		}
	}
	poison := func(bad string) func([]string) ([]byte, error) {
		return func(seqs []string) ([]byte, error) {
			for _, s := range seqs {
				if s == bad {
					return nil, errors.New("boom")
				}
			}
			return []byte(`{"batchItemFailures":[]}`), nil
		}
	}
	type aside struct {
		condition, start, end string
		size, invokes         int
	}
	for _, tc := range []struct {
		name    string
		cfg     Config
		n       int
		respond func(call int, seqs []string) ([]byte, error)
		calls   [][]string
		aside   []aside
	}{
		{
			name:    "success",
			cfg:     Config{ReportBatchItemFailures: true, MaximumRetryAttempts: 2},
			n:       3,
			respond: func(int, []string) ([]byte, error) { return []byte(`{"batchItemFailures":[]}`), nil },
			calls:   [][]string{{"100", "200", "300"}},
		},
		{
			name: "batch item failure retries from the lowest failed record",
			cfg:  Config{ReportBatchItemFailures: true, MaximumRetryAttempts: 2},
			n:    4,
			respond: func(call int, seqs []string) ([]byte, error) {
				if call == 0 {
					return fails("300", "200")(seqs)
				}
				return nil, nil
			},
			calls: [][]string{{"100", "200", "300", "400"}, {"200", "300", "400"}},
		},
		{
			name: "batch item failures exhaust the retries",
			cfg:  Config{ReportBatchItemFailures: true, MaximumRetryAttempts: 1},
			n:    3,
			respond: func(int, []string) ([]byte, error) {
				return fails("300")(nil)
			},
			calls: [][]string{{"100", "200", "300"}, {"300"}},
			aside: []aside{{ConditionRetryAttemptsExhausted, "300", "300", 1, 2}},
		},
		{
			name: "empty itemIdentifier fails the whole batch",
			cfg:  Config{ReportBatchItemFailures: true, MaximumRetryAttempts: 1},
			n:    2,
			respond: func(call int, seqs []string) ([]byte, error) {
				if call == 0 {
					return []byte(`{"batchItemFailures":[{"itemIdentifier":""}]}`), nil
				}
				return nil, nil
			},
			calls: [][]string{{"100", "200"}, {"100", "200"}},
		},
		{
			name: "unknown itemIdentifier fails the whole batch",
			cfg:  Config{ReportBatchItemFailures: true, MaximumRetryAttempts: 0},
			n:    2,
			respond: func(int, []string) ([]byte, error) {
				return fails("999")(nil)
			},
			calls: [][]string{{"100", "200"}},
			aside: []aside{{ConditionRetryAttemptsExhausted, "100", "200", 2, 1}},
		},
		{
			name:    "without ReportBatchItemFailures a response is a success",
			cfg:     Config{MaximumRetryAttempts: 1},
			n:       2,
			respond: func(int, []string) ([]byte, error) { return fails("100")(nil) },
			calls:   [][]string{{"100", "200"}},
		},
		{
			name:    "function error without bisect retries the batch, then sets it aside",
			cfg:     Config{MaximumRetryAttempts: 2},
			n:       2,
			respond: func(_ int, s []string) ([]byte, error) { return poison("200")(s) },
			calls:   [][]string{{"100", "200"}, {"100", "200"}, {"100", "200"}},
			aside:   []aside{{ConditionRetryAttemptsExhausted, "100", "200", 2, 3}},
		},
		{
			name:    "bisect isolates the poison record",
			cfg:     Config{ReportBatchItemFailures: true, BisectBatchOnFunctionError: true, MaximumRetryAttempts: 1},
			n:       4,
			respond: func(_ int, s []string) ([]byte, error) { return poison("300")(s) },
			calls: [][]string{
				{"100", "200", "300", "400"},
				{"100", "200"}, {"300", "400"},
				{"300"}, {"300"}, // retried once, then set aside
				{"400"},
			},
			aside: []aside{{ConditionRetryAttemptsExhausted, "300", "300", 1, 4}},
		},
		{
			name:    "too old records are set aside without invoking",
			cfg:     Config{MaximumRecordAge: 5 * time.Second},
			n:       2,
			respond: func(int, []string) ([]byte, error) { return nil, nil },
			aside:   []aside{{ConditionRecordAgeExceeded, "100", "200", 2, 0}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := 0
			fn := &recorder{}
			fn.respond = func(seqs []string) ([]byte, error) {
				defer func() { call++ }()
				return tc.respond(call, seqs)
			}
			dest := &memoryDestination{}
			tc.cfg.OnFailure, tc.cfg.RetryBackoff = dest, time.Millisecond
			m := mapping(tc.cfg, fn)
			m.cfg.Log = testLogger(t)
			m.process(context.Background(), "shard-1", records(tc.n))
			if !reflect.DeepEqual(fn.calls, tc.calls) {
				t.Errorf("calls %v, want %v", fn.calls, tc.calls)
			}
			var got []aside
			for _, b := range dest.bodies {
				var f FailureRecord
				if err := json.Unmarshal([]byte(b), &f); err != nil {
					t.Fatal(err)
				}
				i := f.DDBStreamBatchInfo
				if f.Version != "1.0" || f.RequestContext.FunctionArn != "arn:function" || i.StreamArn != "arn:stream" || i.ShardID != "shard-1" ||
					i.ApproximateArrivalOfFirstRecord != "2023-11-14T22:13:20.000Z" || f.ResponseContext.StatusCode != 200 || f.Timestamp != "2023-11-14T22:13:30.000Z" {
					t.Errorf("on-failure record %s", b)
				}
				got = append(got, aside{f.RequestContext.Condition, i.StartSequenceNumber, i.EndSequenceNumber, i.BatchSize, f.RequestContext.ApproximateInvokeCount})
			}
			if !reflect.DeepEqual(got, tc.aside) {
				t.Errorf("set aside %+v, want %+v", got, tc.aside)
			}
		})
	}
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}
