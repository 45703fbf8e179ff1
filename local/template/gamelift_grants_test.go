package template

import (
	"slices"
	"strings"
	"testing"
)

// GameLiftApiFunction places as AllocateFunction does (the same grants),
// and besides only keeps and reads placements and reads its keys: the
// keys' secret is granted to it alone, and EventsFunction may only read
// the placements it publishes the end of.
func TestRepoTemplateGameLiftGrants(t *testing.T) {
	tpl := loadRepoTemplate(t)
	allocate, api := grantsOf(t, tpl, "AllocateFunction"), grantsOf(t, tpl, "GameLiftApiFunction")
	extra := []string{"dynamodb:GetItem on !GetAtt GameSessionPlacementsTable.Arn", "dynamodb:PutItem on !GetAtt GameSessionPlacementsTable.Arn",
		"secretsmanager:GetSecretValue on !Ref GameLiftApiKeys"}
	want := slices.Sorted(slices.Values(append(slices.Clone(allocate), extra...)))
	if !slices.Equal(api, want) {
		t.Errorf("GameLiftApiFunction's grants:\n got  %v\n want %v", api, want)
	}
	for _, fn := range tpl.LogicalIDs(TypeServerlessFunction) {
		for _, g := range grantsOf(t, tpl, fn) {
			switch {
			case strings.Contains(g, "GameLiftApiKeys") && fn != "GameLiftApiFunction":
				t.Errorf("%s may %s", fn, g)
			case strings.Contains(g, "GameSessionPlacementsTable") && fn != "GameLiftApiFunction" && g != "dynamodb:GetItem on !GetAtt GameSessionPlacementsTable.Arn":
				t.Errorf("%s may %s", fn, g)
			}
		}
	}
	if !slices.Contains(grantsOf(t, tpl, "EventsFunction"), "dynamodb:GetItem on !GetAtt GameSessionPlacementsTable.Arn") {
		t.Error("EventsFunction cannot read the placements it publishes the end of")
	}
}
