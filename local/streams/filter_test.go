package streams

import (
	"strings"
	"testing"
)

// GameInstancesStream's filters in template.yaml (local/stack's
// TestTemplateFiltersPassExactlyTheEvents holds the template's own to the
// event catalogue).
var gameInstanceFilters = []string{
	`{"eventName":["INSERT","MODIFY"],"dynamodb":{"NewImage":{"state":{"S":["Allocated","Failed","Ended","Unhealthy"]}}}}`,
	`{"eventName":["MODIFY"],"dynamodb":{"NewImage":{"state":{"S":["Linked"]}},"OldImage":{"state":{"S":[{"anything-but":["Linked"]}]}}}}`,
	`{"eventName":["INSERT"],"dynamodb":{"NewImage":{"state":{"S":["Linked"]}}}}`,
}

func stateRecord(event, oldState, newState string) string {
	img := func(state string) string {
		if state == "" {
			return ""
		}
		return `{"gameInstanceId":{"S":"gi-1"},"state":{"S":"` + state + `"},"version":{"N":"3"}}`
	}
	d := `"Keys":{"gameInstanceId":{"S":"gi-1"}},"SequenceNumber":"100","SizeBytes":10,"StreamViewType":"NEW_AND_OLD_IMAGES"`
	if s := img(newState); s != "" {
		d += `,"NewImage":` + s
	}
	if s := img(oldState); s != "" {
		d += `,"OldImage":` + s
	}
	return `{"eventID":"1","eventName":"` + event + `","eventSource":"aws:dynamodb","dynamodb":{` + d + `}}`
}

func TestFilterMatches(t *testing.T) {
	for _, tc := range []struct {
		name     string
		patterns []string
		doc      string
		want     bool
	}{
		{"no patterns: everything", nil, `{"eventName":"REMOVE"}`, true},
		{"claim: insert Allocating", gameInstanceFilters, stateRecord("INSERT", "", "Allocating"), false},
		{"retry claim: failed to allocating", gameInstanceFilters, stateRecord("MODIFY", "Failed", "Allocating"), false},
		{"allocating to allocated", gameInstanceFilters, stateRecord("MODIFY", "Allocating", "Allocated"), true},
		{"allocated to linked (old is not Linked)", gameInstanceFilters, stateRecord("MODIFY", "Allocated", "Linked"), true},
		{"linked to ended (new is not Linked)", gameInstanceFilters, stateRecord("MODIFY", "Linked", "Ended"), true},
		{"heartbeat: linked to linked", gameInstanceFilters, stateRecord("MODIFY", "Linked", "Linked"), false},
		{"TTL remove", gameInstanceFilters, stateRecord("REMOVE", "Ended", ""), false},
		{"anything-but needs the field", []string{`{"dynamodb":{"NewImage":{"state":{"S":[{"anything-but":["Linked"]}]}}}}`}, stateRecord("REMOVE", "Ended", ""), false},
		{"anything-but single value", []string{`{"eventName":[{"anything-but":"REMOVE"}]}`}, `{"eventName":"INSERT"}`, true},
		{"anything-but prefix", []string{`{"eventName":[{"anything-but":{"prefix":"MOD"}}]}`}, `{"eventName":"MODIFY"}`, false},
		{"prefix", []string{`{"eventName":[{"prefix":"MOD"}]}`}, `{"eventName":"MODIFY"}`, true},
		{"suffix", []string{`{"eventName":[{"suffix":"ERT"}]}`}, `{"eventName":"INSERT"}`, true},
		{"equals-ignore-case", []string{`{"eventName":[{"equals-ignore-case":"insert"}]}`}, `{"eventName":"INSERT"}`, true},
		{"exists true", []string{`{"dynamodb":{"OldImage":[{"exists":true}]}}`}, stateRecord("INSERT", "", "Allocating"), false},
		{"exists false", []string{`{"dynamodb":{"OldImage":[{"exists":false}]}}`}, stateRecord("INSERT", "", "Allocating"), true},
		{"exists false under a missing object", []string{`{"a":{"b":[{"exists":false}]}}`}, `{}`, true},
		{"number by value", []string{`{"n":[3]}`}, `{"n":3.0}`, true},
		{"number is not a string", []string{`{"n":[3]}`}, `{"n":"3"}`, false},
		{"boolean", []string{`{"b":[true]}`}, `{"b":true}`, true},
		{"null", []string{`{"b":[null]}`}, `{"b":null}`, true},
		{"list in the record: any element", []string{`{"tags":["x"]}`}, `{"tags":["a","x"]}`, true},
		{"all fields must match", []string{`{"eventName":["MODIFY"],"eventSource":["aws:dynamodb"]}`}, `{"eventName":"MODIFY","eventSource":"other"}`, false},
		{"nested pattern against a scalar", []string{`{"eventName":{"x":["y"]}}`}, `{"eventName":"INSERT"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := CompileFilter(tc.patterns)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := DecodeDocument([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if got := f.MatchDocument(doc); got != tc.want {
				t.Errorf("match = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFilterRejectsWhatItCannotEvaluate(t *testing.T) {
	for _, tc := range []struct{ pattern, want string }{
		{`{"n":[{"numeric":[">",1]}]}`, `"numeric" is not supported`},
		{`{"s":[{"wildcard":"a*"}]}`, `"wildcard" is not supported`},
		{`{"s":[{"anything-but":{"wildcard":"a*"}}]}`, `anything-but "wildcard"`},
		{`{"s":[]}`, "empty list"},
		{`{"s":"x"}`, "want an object or a list"},
		{`["x"]`, "want a JSON object"},
		{`{"s":`, "pattern 0"},
	} {
		if _, err := CompileFilter([]string{tc.pattern}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.pattern, err, tc.want)
		}
	}
}
