package regiontable

import (
	"regexp"
	"slices"
	"testing"
)

// placeholders finds exactly what the pattern it replaces (compiled here,
// never at start-up) found.
func TestPlaceholdersIsThePattern(t *testing.T) {
	re := regexp.MustCompile(`#\w+`)
	inputs := []string{"SET #state = :s, #since = :now", "#a#b", "##x", "# x", "a#", "#é", "#_1 + #lastPing", "attribute_exists(#region)"}
	level := []string{""}
	for range 4 {
		var next []string
		for _, s := range level {
			for _, c := range []byte("#a_0 ,\xc3") {
				next = append(next, s+string(c))
			}
		}
		inputs, level = append(inputs, next...), next
	}
	for _, s := range inputs {
		if got, want := placeholders(s), re.FindAllString(s, -1); !slices.Equal(got, want) {
			t.Errorf("placeholders(%q) = %q, the pattern finds %q", s, got, want)
		}
	}
}
