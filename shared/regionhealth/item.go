package regionhealth

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// item is a region as stored. Times that conditions compare are epoch
// milliseconds (N); since is RFC3339 because only people read it.
type item struct {
	Region              string `dynamodbav:"region"`
	State               string `dynamodbav:"state"`
	Since               string `dynamodbav:"since"`
	ConsecutiveFailures int    `dynamodbav:"consecutiveFailures"`
	OpenUntil           int64  `dynamodbav:"openUntil"`
	ProbeUntil          int64  `dynamodbav:"probeUntil"`
	LastPingTargetsAt   int64  `dynamodbav:"lastPingTargetsAt"`
	LastSuccessAt       int64  `dynamodbav:"lastSuccessAt"`
	FirstSeenAt         int64  `dynamodbav:"firstSeenAt"`
	Reason              string `dynamodbav:"reason"`
}

func decode(av map[string]types.AttributeValue) (Health, error) {
	var it item
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return Health{}, fmt.Errorf("decode region health: %w", err)
	}
	h := Health{Region: it.Region, State: RegionState(it.State), ConsecutiveFailures: it.ConsecutiveFailures,
		OpenUntil: fromMillis(it.OpenUntil), ProbeUntil: fromMillis(it.ProbeUntil),
		LastPingTargetsAt: fromMillis(it.LastPingTargetsAt), LastSuccessAt: fromMillis(it.LastSuccessAt),
		FirstSeenAt: fromMillis(it.FirstSeenAt), Reason: it.Reason}
	h.State = h.state()
	if it.Since != "" {
		since, err := time.Parse(time.RFC3339Nano, it.Since)
		if err != nil {
			return Health{}, fmt.Errorf("decode region health %s: since: %w", it.Region, err)
		}
		h.Since = since
	}
	return h, nil
}

func fromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// millis is t as stored: epoch milliseconds.
func millis(t time.Time) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(t.UnixMilli(), 10)}
}

// rfc3339 is t at the stored (millisecond) precision, so since reads back
// equal to the times compared in conditions.
func rfc3339(t time.Time) types.AttributeValue {
	return &types.AttributeValueMemberS{Value: time.UnixMilli(t.UnixMilli()).UTC().Format(time.RFC3339Nano)}
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func number(n int) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.Itoa(n)}
}

func key(region string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"region": str(region)}
}

// attributes maps the placeholders expressions use to stored names. Every
// name goes through a placeholder: state and others are reserved words.
var attributes = map[string]string{
	"#state":       "state",
	"#since":       "since",
	"#failures":    "consecutiveFailures",
	"#openUntil":   "openUntil",
	"#probeUntil":  "probeUntil",
	"#lastPing":    "lastPingTargetsAt",
	"#lastSuccess": "lastSuccessAt",
	"#firstSeen":   "firstSeenAt",
	"#reason":      "reason",
}

var placeholder = regexp.MustCompile(`#\w+`)

// namesIn returns the ExpressionAttributeNames for exactly the placeholders
// used: DynamoDB rejects a request that defines an unused one.
func namesIn(exprs ...string) (map[string]string, error) {
	names := map[string]string{}
	for _, e := range exprs {
		for _, p := range placeholder.FindAllString(e, -1) {
			name, ok := attributes[p]
			if !ok {
				return nil, fmt.Errorf("unknown attribute placeholder %s in %q", p, e)
			}
			names[p] = name
		}
	}
	return names, nil
}
