package config

import (
	"regexp"
	"strings"
	"testing"
)

// strs is every string of at most n bytes over alphabet, then extra.
func strs(alphabet string, n int, extra ...string) []string {
	out, level := []string{""}, []string{""}
	for range n {
		var next []string
		for _, s := range level {
			for i := 0; i < len(alphabet); i++ {
				next = append(next, s+alphabet[i:i+1])
			}
		}
		out, level = append(out, next...), next
	}
	return append(out, extra...)
}

// The hand-written checks accept exactly what the patterns they replace
// (compiled here, never at start-up) matched.
func TestPatternsByHand(t *testing.T) {
	rate := regexp.MustCompile(`^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$`)
	for _, tc := range []struct {
		name    string
		pattern string
		check   func(string) bool
		inputs  []string
	}{
		{"MATCHMAKING_EVENT_NAME", `^[A-Za-z][A-Za-z0-9._-]{0,127}$`, validEventName,
			strs("aZ09._- :/é\n", 3, "GameFabricMatchmakingSucceeded", "a"+strings.Repeat("b", 127), "a"+strings.Repeat("b", 128),
				"Match.Placed-v2_x", "1Match", "_x", "Match\n")},
		{"rate expression", rate.String(), func(s string) bool { _, _, ok := splitRate(s); return ok },
			append(strs("rate( 1)s", 4), "rate(1 minute)", "rate(5 minutes)", "rate(10 hours)", "rate(1 day)", "rate(2 days)",
				"rate(1 second)", "rate(-1 minutes)", "rate(1  minutes)", "rate(1 minutes) ", "rate( 1 minute)", "rate(1 minute))",
				"rate(1minute)", "rate(١ minute)", "rate(99999999999999999999 days)", "Rate(1 minute)", "rate(1 Minute)", "cron(0 * * * ? *)")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			re := regexp.MustCompile(tc.pattern)
			for _, s := range tc.inputs {
				if got, want := tc.check(s), re.MatchString(s); got != want {
					t.Errorf("%q: %v, the pattern %s says %v", s, got, tc.pattern, want)
				}
			}
		})
	}
	// splitRate's parts are the pattern's groups.
	for _, s := range []string{"rate(1 minute)", "rate(015 hours)"} {
		count, unit, _ := splitRate(s)
		if m := rate.FindStringSubmatch(s); count != m[1] || unit != m[2] {
			t.Errorf("splitRate(%q) = %q, %q; want %q, %q", s, count, unit, m[1], m[2])
		}
	}
}
