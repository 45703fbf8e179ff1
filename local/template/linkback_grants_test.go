package template

import (
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

// LinkBackFunction reads one record to check a token and moves it on with
// conditional updates (and reads the other sessions' states in a batch for
// an all-sessions heartbeat); of a game server's record it may read only
// which sessions it holds and its last beat for them, never its callback
// token.
func TestRepoTemplateLinkBackGrants(t *testing.T) {
	tpl := loadRepoTemplate(t)
	want := []string{
		"dynamodb:BatchGetItem on !GetAtt GameInstancesTable.Arn",
		"dynamodb:BatchGetItem on !GetAtt GameServersTable.Arn",
		"dynamodb:GetItem on !GetAtt GameInstancesTable.Arn",
		"dynamodb:GetItem on !GetAtt GameServersTable.Arn",
		"dynamodb:UpdateItem on !GetAtt GameInstancesTable.Arn",
		"dynamodb:UpdateItem on !GetAtt GameServersTable.Arn",
	}
	if got := grantsOf(t, tpl, "LinkBackFunction"); !slices.Equal(got, want) {
		t.Errorf("LinkBackFunction's grants:\n got  %v\n want %v", got, want)
	}
	var limited bool
	for _, policy := range items(lookup(tpl.byID["LinkBackFunction"].props, "Policies")) {
		for _, st := range items(lookup(policy, "Statement")) {
			res, _ := yaml.Marshal(deref(lookup(st, "Resource")))
			if string(res) != "!GetAtt GameServersTable.Arn\n" || !hasAction(st, "dynamodb:GetItem") {
				continue
			}
			var attrs []string
			for _, a := range items(lookup(lookup(lookup(st, "Condition"), "ForAllValues:StringEquals"), "dynamodb:Attributes")) {
				attrs = append(attrs, deref(a).Value)
			}
			sel := lookup(lookup(lookup(st, "Condition"), "StringEqualsIfExists"), "dynamodb:Select")
			limited = slices.Equal(attrs, []string{"address", "lastBeatAt", "sessions"}) && sel != nil && deref(sel).Value == "SPECIFIC_ATTRIBUTES"
		}
	}
	if !limited {
		t.Error("LinkBackFunction's GetItem on GameServersTable is not limited to the address, lastBeatAt and sessions attributes")
	}
}

func hasAction(st *yaml.Node, action string) bool {
	for _, a := range items(lookup(st, "Action")) {
		if deref(a).Value == action {
			return true
		}
	}
	return false
}
