package allocation

import (
	"regexp"
	"testing"
)

// isLabelValue accepts exactly what the pattern it replaces (compiled
// here, never at start-up) matched.
func TestLabelValueIsThePattern(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)
	inputs := []string{"", "prag", "sample-game-armada-set", "a.b_c", "-a", "a-", "é", "a\n"}
	level := []string{""}
	for range 4 {
		var next []string
		for _, s := range level {
			for _, c := range []byte("aZ0._- :\xc3") {
				next = append(next, s+string(c))
			}
		}
		inputs, level = append(inputs, next...), next
	}
	for _, s := range inputs {
		if got, want := isLabelValue(s), re.MatchString(s); got != want {
			t.Errorf("isLabelValue(%q) = %v, the pattern says %v", s, got, want)
		}
	}
}
