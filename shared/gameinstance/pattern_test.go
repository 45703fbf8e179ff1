package gameinstance

import (
	"regexp"
	"testing"
)

// The hand-written checks accept exactly what the patterns they replace
// (compiled here, never at start-up) matched.
func TestPatternsByHand(t *testing.T) {
	var inputs []string
	level := []string{""}
	for range 3 {
		var next []string
		for _, s := range level {
			for _, c := range []byte("aZ09._:-~+/= \n\xc3") {
				next = append(next, s+string(c))
			}
		}
		inputs, level = append(inputs, next...), next
	}
	inputs = append(inputs, "", "gi-1", "a.b_c:d-e", "Zm9vYmFy==", "abc-._~+/XYZ", "==", "a=b", "abc ", "é")
	for _, tc := range []struct {
		pattern string
		check   func(string) bool
	}{
		{`^[A-Za-z0-9._:-]+$`, idChars},
		{`^[A-Za-z0-9._~+/-]+=*$`, IsBearerToken},
	} {
		re := regexp.MustCompile(tc.pattern)
		for _, s := range inputs {
			if got, want := tc.check(s), re.MatchString(s); got != want {
				t.Errorf("%q: %v, the pattern %s says %v", s, got, tc.pattern, want)
			}
		}
	}
}
