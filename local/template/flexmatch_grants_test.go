package template

import (
	"slices"
	"strings"
	"testing"
)

// MatchmakingFunction places a match as AllocateFunction places a request
// (the same grants), and besides only keeps matches and reads tickets;
// gamelift:DescribeMatchmaking is granted to it alone, and EventsFunction
// may only read the matches it publishes again.
func TestRepoTemplateFlexMatchGrants(t *testing.T) {
	tpl := loadRepoTemplate(t)
	allocate, matchmaking := grantsOf(t, tpl, "AllocateFunction"), grantsOf(t, tpl, "MatchmakingFunction")
	extra := []string{"dynamodb:PutItem on !GetAtt MatchesTable.Arn", `gamelift:DescribeMatchmaking on "*"`}
	want := slices.Sorted(slices.Values(append(slices.Clone(allocate), extra...)))
	if !slices.Equal(matchmaking, want) {
		t.Errorf("MatchmakingFunction's grants:\n got  %v\n want %v", matchmaking, want)
	}
	for _, fn := range tpl.LogicalIDs(TypeServerlessFunction) {
		for _, g := range grantsOf(t, tpl, fn) {
			switch {
			case strings.HasPrefix(g, "gamelift:") && fn != "MatchmakingFunction":
				t.Errorf("%s may %s", fn, g)
			case strings.Contains(g, "MatchesTable") && fn != "MatchmakingFunction" && g != "dynamodb:GetItem on !GetAtt MatchesTable.Arn":
				t.Errorf("%s may %s", fn, g)
			}
		}
	}
	if !slices.Contains(grantsOf(t, tpl, "EventsFunction"), "dynamodb:GetItem on !GetAtt MatchesTable.Arn") {
		t.Error("EventsFunction cannot read the matches it publishes again")
	}
}
