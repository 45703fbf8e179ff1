package region

import (
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"us-west", true}, {"eu-central-1", true}, {"ap.south_2", true}, {"0zone", true},
		{"", false}, {"-us", false}, {"US-West", false}, {"us west", false}, {"us/west", false},
		{strings.Repeat("a", MaxName), true}, {strings.Repeat("a", MaxName+1), false},
	}
	for _, tc := range tests {
		if got := Valid(tc.name); got != tc.want {
			t.Errorf("Valid(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := Normalize("  EU-Central-1 "); got != "eu-central-1" {
		t.Errorf("Normalize = %q", got)
	}
}
