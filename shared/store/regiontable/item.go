package regiontable

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
)

// regionItem is a region as stored. Times that conditions compare are epoch
// milliseconds (N); since is RFC3339 because only people read it.
type regionItem struct {
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

func decodeRegion(av map[string]types.AttributeValue) (regionhealth.Health, error) {
	var it regionItem
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return regionhealth.Health{}, fmt.Errorf("decode region health: %w", err)
	}
	h := regionhealth.Health{Region: it.Region, State: regionhealth.RegionState(it.State), ConsecutiveFailures: it.ConsecutiveFailures,
		OpenUntil: fromMillis(it.OpenUntil), ProbeUntil: fromMillis(it.ProbeUntil),
		LastPingTargetsAt: fromMillis(it.LastPingTargetsAt), LastSuccessAt: fromMillis(it.LastSuccessAt),
		FirstSeenAt: fromMillis(it.FirstSeenAt), Reason: it.Reason}
	h.State = h.EffectiveState()
	if it.Since != "" {
		since, err := time.Parse(time.RFC3339Nano, it.Since)
		if err != nil {
			return regionhealth.Health{}, fmt.Errorf("decode region health %s: since: %w", it.Region, err)
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

func regionKey(region string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"region": str(region)}
}

// regionAttributes maps the placeholders expressions use to stored names. Every
// name goes through a placeholder: state and others are reserved words.
var regionAttributes = map[string]string{
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

// placeholders returns the #name placeholders in expr, in order: what
// the pattern #\w+ found (\w being ASCII letters, digits and _). By hand,
// not with a package-level regexp, which every function would compile at
// each cold start.
func placeholders(expr string) []string {
	var out []string
	for i := 0; i < len(expr); i++ {
		if expr[i] != '#' {
			continue
		}
		j := i + 1
		for j < len(expr) && isWordByte(expr[j]) {
			j++
		}
		if j > i+1 {
			out = append(out, expr[i:j])
			i = j - 1
		}
	}
	return out
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// regionNamesIn returns the ExpressionAttributeNames for exactly the placeholders
// used: DynamoDB rejects a request that defines an unused one.
func regionNamesIn(exprs ...string) (map[string]string, error) {
	names := map[string]string{}
	for _, e := range exprs {
		for _, p := range placeholders(e) {
			name, ok := regionAttributes[p]
			if !ok {
				return nil, fmt.Errorf("unknown attribute placeholder %s in %q", p, e)
			}
			names[p] = name
		}
	}
	return names, nil
}

// Decode reads a region-health item image, as DynamoDB Streams carries
// it, into its health.
func Decode(av map[string]types.AttributeValue) (regionhealth.Health, error) {
	h, err := decodeRegion(av)
	if err == nil && h.Region == "" {
		err = errors.New("decode region health: image without region")
	}
	return h, err
}
