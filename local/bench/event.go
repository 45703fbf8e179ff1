package bench

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// allocateEvent is the payload-2.0 event API Gateway's HTTP API sends the
// allocate function for POST /v1/allocations, as local/gateway builds it.
func allocateEvent(gameInstanceID, region string, seq int) ([]byte, error) {
	return postEvent(map[string]string{"gameInstanceId": gameInstanceID, "desiredRegion": region,
		"gameServerVersion": Version, "serverArgs": "-map=arena"}, seq)
}

// postEvent is that event with request (JSON-encoded) as its body.
func postEvent(request any, seq int) ([]byte, error) {
	body, err := json.Marshal(request)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "POST /v1/allocations", RawPath: "/v1/allocations",
		Headers: map[string]string{"content-type": "application/json", "content-length": strconv.Itoa(len(body)),
			"host": "127.0.0.1", "user-agent": "allocsvc-bench"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey: "POST /v1/allocations", AccountID: "000000000000", Stage: "$default",
			RequestID: "bench-" + strconv.Itoa(seq), APIID: "local", DomainName: "127.0.0.1", DomainPrefix: "127",
			Time: now.Format("02/Jan/2006:15:04:05 -0700"), TimeEpoch: now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/v1/allocations",
				Protocol: "HTTP/1.1", SourceIP: "127.0.0.1", UserAgent: "allocsvc-bench"},
		},
		Body: string(body),
	}
	return json.Marshal(ev)
}

// statusOf reads the statusCode of a payload-2.0 response.
func statusOf(payload []byte) int {
	var resp events.APIGatewayV2HTTPResponse
	if json.Unmarshal(payload, &resp) != nil {
		return 0
	}
	return resp.StatusCode
}
