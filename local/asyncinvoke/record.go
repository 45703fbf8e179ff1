package asyncinvoke

import (
	"encoding/json"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/internal/esm"
	"github.com/gamefabric-alloc/allocsvc/local/internal/uuid"
)

// record is Lambda's invocation record for an asynchronous invocation
// sent to an on-failure destination ("Capturing records of Lambda
// asynchronous invocations", AWS Lambda Developer Guide).
type record struct {
	Version         string              `json:"version"`
	Timestamp       string              `json:"timestamp"`
	RequestContext  esm.RequestContext  `json:"requestContext"`
	RequestPayload  json.RawMessage     `json:"requestPayload"`
	ResponseContext esm.ResponseContext `json:"responseContext"`
	ResponsePayload json.RawMessage     `json:"responsePayload"`
}

// Record is the on-failure record of event after invocations: the event
// as requestPayload, and as responsePayload the last invocation's error
// document (payload, as the runtime posted it), or one made of invokeErr
// when the function left none (a timeout, a crash).
func Record(functionARN, condition string, invocations int, event, payload []byte, invokeErr error, at time.Time) []byte {
	rec := record{
		Version:   "1.0",
		Timestamp: at.UTC().Format(esm.TimestampLayout),
		RequestContext: esm.RequestContext{RequestID: uuid.New(), FunctionArn: functionARN + ":$LATEST",
			Condition: condition, ApproximateInvokeCount: invocations},
		RequestPayload:  jsonOrString(event),
		ResponseContext: esm.ResponseContext{StatusCode: 200, ExecutedVersion: "$LATEST", FunctionError: "Unhandled"},
		ResponsePayload: payload,
	}
	if !json.Valid(payload) {
		msg := "the function returned no error document"
		if invokeErr != nil {
			msg = invokeErr.Error()
		}
		rec.ResponsePayload, _ = json.Marshal(map[string]string{"errorType": "Runtime.ExitError", "errorMessage": msg})
	}
	b, _ := json.Marshal(rec) // every member is valid JSON by now
	return b
}

// jsonOrString is b if it is JSON, else b as a JSON string.
func jsonOrString(b []byte) json.RawMessage {
	if json.Valid(b) {
		return b
	}
	s, _ := json.Marshal(string(b))
	return s
}
