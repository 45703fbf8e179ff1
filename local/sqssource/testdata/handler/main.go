// Command handler is a test function for the SQS event source mapping,
// run through the local Runtime API like a real bootstrap: it prints one
// line per record it gets and answers by each body's prefix. "fail:" is
// reported as a batch item failure every time; "boom:" fails the whole
// invocation the first time it is received. Anything else succeeds.
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(handle)
}

func handle(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var res events.SQSEventResponse
	boom := false
	for _, r := range ev.Records {
		count := r.Attributes["ApproximateReceiveCount"]
		fmt.Printf("record body=%s receive=%s id=%t handle=%t source=%s arn=%s region=%s\n",
			r.Body, count, r.MessageId != "", r.ReceiptHandle != "", r.EventSource, r.EventSourceARN, r.AWSRegion)
		switch {
		case strings.HasPrefix(r.Body, "fail:"):
			res.BatchItemFailures = append(res.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		case strings.HasPrefix(r.Body, "boom:") && count == "1":
			boom = true
		}
	}
	if boom {
		return res, errors.New("boom on the first receive")
	}
	return res, nil
}
