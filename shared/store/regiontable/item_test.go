package regiontable

import (
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
)

// regionT0 is a fixed instant for the region-health item tests.
var regionT0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func TestDecodeRegion(t *testing.T) {
	since := regionT0.Add(1500 * time.Millisecond)
	tests := []struct {
		name string
		av   map[string]types.AttributeValue
		want regionhealth.Health
	}{
		{"full item", map[string]types.AttributeValue{
			"region": str("us-west"), "state": str("Unhealthy"), "since": rfc3339(since),
			"consecutiveFailures": number(4), "openUntil": millis(regionT0.Add(time.Minute)), "probeUntil": millis(regionT0.Add(90 * time.Second)),
			"lastPingTargetsAt": millis(regionT0.Add(-time.Minute)), "lastSuccessAt": millis(regionT0.Add(-time.Hour)),
			"firstSeenAt": millis(regionT0.Add(-24 * time.Hour)), "reason": str(regionhealth.BecauseAllocationFailures),
		}, regionhealth.Health{Region: "us-west", State: regionhealth.RegionUnhealthy, Since: since, ConsecutiveFailures: 4,
			OpenUntil: regionT0.Add(time.Minute), ProbeUntil: regionT0.Add(90 * time.Second), LastPingTargetsAt: regionT0.Add(-time.Minute),
			LastSuccessAt: regionT0.Add(-time.Hour), FirstSeenAt: regionT0.Add(-24 * time.Hour), Reason: regionhealth.BecauseAllocationFailures}},
		{"only a counter: Initialized, zero times", map[string]types.AttributeValue{
			"region": str("eu"), "consecutiveFailures": number(1),
		}, regionhealth.Health{Region: "eu", State: regionhealth.RegionInitialized, ConsecutiveFailures: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeRegion(tt.av)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decode:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
	if _, err := decodeRegion(map[string]types.AttributeValue{"region": str("x"), "since": str("yesterday")}); err == nil {
		t.Error("decode accepted an unparsable since")
	}
}

func TestRFC3339IsMillisecondPrecision(t *testing.T) {
	got := rfc3339(regionT0.Add(1234567 * time.Nanosecond)).(*types.AttributeValueMemberS).Value
	if want := "2025-06-01T12:00:00.001Z"; got != want {
		t.Errorf("rfc3339 = %q, want %q", got, want)
	}
}

func TestNamesIn(t *testing.T) {
	got, err := regionNamesIn("SET #state = :s, #since = if_not_exists(#since, :t)", "#state <> :s")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"#state": "state", "#since": "since"}; !reflect.DeepEqual(got, want) {
		t.Errorf("namesIn = %v, want %v", got, want)
	}
	if _, err := regionNamesIn("SET #stat = :s"); err == nil {
		t.Error("namesIn accepted an unknown placeholder")
	}
}

func TestDecodeImageWithoutRegion(t *testing.T) {
	if _, err := Decode(map[string]types.AttributeValue{"state": str("Deployed")}); err == nil {
		t.Error("a region image without region decoded")
	}
}
