package region

import (
	"regexp"
	"strings"
	"testing"
)

// Valid accepts exactly what the pattern it replaces (compiled here, never
// at start-up) matched, within MaxName.
func TestValidIsThePattern(t *testing.T) {
	re := regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	inputs := []string{strings.Repeat("a", MaxName), strings.Repeat("a", MaxName+1), "eu-central-1", "us-west\n", "é"}
	level := []string{""}
	for range 3 {
		var next []string
		for _, s := range level {
			for _, c := range []byte("az09._-A :/\xc3") {
				next = append(next, s+string(c))
			}
		}
		inputs, level = append(inputs, next...), next
	}
	for _, s := range append(inputs, "") {
		if got, want := Valid(s), len(s) <= MaxName && re.MatchString(s); got != want {
			t.Errorf("Valid(%q) = %v, the pattern says %v", s, got, want)
		}
	}
}
