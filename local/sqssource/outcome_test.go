package sqssource

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Lambda's rules for a batch's outcome (AWS Lambda Developer Guide,
// "Handling errors for an SQS event source": complete success, complete
// failure, partial batch response).
func TestHandled(t *testing.T) {
	ids := []string{"m1", "m2", "m3"}
	for _, tc := range []struct {
		name      string
		payload   string
		invokeErr error
		report    bool
		want      []string
		why       string // part of the error, "" for none
	}{
		{name: "function error", payload: `{"errorType":"x"}`, invokeErr: errors.New("boom"), report: true, why: "invocation failed"},
		{name: "function error without reporting", invokeErr: errors.New("timed out"), why: "timed out"},
		{name: "success without reporting ignores the response", payload: `{"batchItemFailures":[{"itemIdentifier":"m1"}]}`, want: ids},
		{name: "empty response", payload: ``, report: true, want: ids},
		{name: "null response", payload: `null`, report: true, want: ids},
		{name: "empty object", payload: `{}`, report: true, want: ids},
		{name: "null failures", payload: `{"batchItemFailures":null}`, report: true, want: ids},
		{name: "no failures", payload: `{"batchItemFailures":[]}`, report: true, want: ids},
		{name: "one failure", payload: `{"batchItemFailures":[{"itemIdentifier":"m2"}]}`, report: true, want: []string{"m1", "m3"}, why: "1 reported"},
		{name: "all failed", payload: `{"batchItemFailures":[{"itemIdentifier":"m3"},{"itemIdentifier":"m1"},{"itemIdentifier":"m2"}]}`, report: true, why: "3 reported"},
		{name: "same failure twice", payload: `{"batchItemFailures":[{"itemIdentifier":"m2"},{"itemIdentifier":"m2"}]}`, report: true, want: []string{"m1", "m3"}, why: "1 reported"},
		{name: "unknown message", payload: `{"batchItemFailures":[{"itemIdentifier":"m9"}]}`, report: true, why: `"m9" names no message`},
		{name: "empty identifier", payload: `{"batchItemFailures":[{"itemIdentifier":""}]}`, report: true, why: "names no message"},
		{name: "null identifier", payload: `{"batchItemFailures":[{"itemIdentifier":null}]}`, report: true, why: "names no message"},
		{name: "bad key name", payload: `{"batchItemFailures":[{"id":"m2"}]}`, report: true, why: "names no message"},
		{name: "invalid JSON", payload: `{"batchItemFailures":[`, report: true, why: "batch failed"},
		{name: "not an object", payload: `"ok"`, report: true, why: "batch failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Handled(ids, []byte(tc.payload), tc.invokeErr, tc.report)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("handled %v, want %v", got, tc.want)
			}
			if reported := errors.Is(err, ErrReported); reported != strings.Contains(tc.why, "reported") {
				t.Errorf("errors.Is(%v, ErrReported) = %v", err, reported)
			}
			switch {
			case tc.why == "" && err != nil:
				t.Errorf("err = %v, want none", err)
			case tc.why != "" && (err == nil || !strings.Contains(err.Error(), tc.why)):
				t.Errorf("err = %v, want one containing %q", err, tc.why)
			}
		})
	}
}
