package regionhealth

import (
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestDecode(t *testing.T) {
	since := t0.Add(1500 * time.Millisecond)
	tests := []struct {
		name string
		av   map[string]types.AttributeValue
		want Health
	}{
		{"full item", map[string]types.AttributeValue{
			"region": str("us-west"), "state": str("Unhealthy"), "since": rfc3339(since),
			"consecutiveFailures": number(4), "openUntil": millis(t0.Add(time.Minute)), "probeUntil": millis(t0.Add(90 * time.Second)),
			"lastPingTargetsAt": millis(t0.Add(-time.Minute)), "lastSuccessAt": millis(t0.Add(-time.Hour)),
			"firstSeenAt": millis(t0.Add(-24 * time.Hour)), "reason": str(BecauseAllocationFailures),
		}, Health{Region: "us-west", State: RegionUnhealthy, Since: since, ConsecutiveFailures: 4,
			OpenUntil: t0.Add(time.Minute), ProbeUntil: t0.Add(90 * time.Second), LastPingTargetsAt: t0.Add(-time.Minute),
			LastSuccessAt: t0.Add(-time.Hour), FirstSeenAt: t0.Add(-24 * time.Hour), Reason: BecauseAllocationFailures}},
		{"only a counter: Initialized, zero times", map[string]types.AttributeValue{
			"region": str("eu"), "consecutiveFailures": number(1),
		}, Health{Region: "eu", State: RegionInitialized, ConsecutiveFailures: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decode(tt.av)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decode:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
	if _, err := decode(map[string]types.AttributeValue{"region": str("x"), "since": str("yesterday")}); err == nil {
		t.Error("decode accepted an unparsable since")
	}
}

func TestRFC3339IsMillisecondPrecision(t *testing.T) {
	got := rfc3339(t0.Add(1234567 * time.Nanosecond)).(*types.AttributeValueMemberS).Value
	if want := "2025-06-01T12:00:00.001Z"; got != want {
		t.Errorf("rfc3339 = %q, want %q", got, want)
	}
}

func TestNamesIn(t *testing.T) {
	got, err := namesIn("SET #state = :s, #since = if_not_exists(#since, :t)", "#state <> :s")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"#state": "state", "#since": "since"}; !reflect.DeepEqual(got, want) {
		t.Errorf("namesIn = %v, want %v", got, want)
	}
	if _, err := namesIn("SET #stat = :s"); err == nil {
		t.Error("namesIn accepted an unknown placeholder")
	}
}
