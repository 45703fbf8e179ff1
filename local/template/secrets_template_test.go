package template

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestRepoTemplateGrantsExactlyTheNamedSecrets: each function may read
// only the secrets the deployment names in its parameters (or the stack
// creates), never a pattern.
func TestRepoTemplateGrantsExactlyTheNamedSecrets(t *testing.T) {
	tpl, err := Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"AllocateFunction":    {"AllocatorTokenSecretArn", "AllocatorTokenSecretArns"},
		"PingRefreshFunction": {"PingTokenSecretArn"},
		// The queue worker runs the same allocation, with the same tokens.
		"PlacementFunction": {"AllocatorTokenSecretArn", "AllocatorTokenSecretArns"},
		// A match is allocated as an API call is.
		"MatchmakingFunction": {"AllocatorTokenSecretArn", "AllocatorTokenSecretArns"},
		// So is a GameLift placement; its access keys are its alone.
		"GameLiftApiFunction": {"AllocatorTokenSecretArn", "AllocatorTokenSecretArns", "GameLiftApiKeys"},
	}
	got := map[string][]string{}
	for id, res := range tpl.byID {
		policies := deref(lookup(res.props, "Policies"))
		if policies == nil {
			continue
		}
		for _, policy := range policies.Content {
			statements := lookup(policy, "Statement")
			if statements == nil {
				continue
			}
			for _, st := range deref(statements).Content {
				if !grants(lookup(st, "Action"), "secretsmanager:GetSecretValue") {
					continue
				}
				refs, wildcard := secretRefs(lookup(st, "Resource"))
				if wildcard {
					t.Errorf("%s grants GetSecretValue on a wildcard", id)
				}
				got[id] = append(got[id], refs...)
			}
		}
	}
	for id := range got {
		sort.Strings(got[id])
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GetSecretValue grants = %v, want %v", got, want)
	}
}

func grants(actions *yaml.Node, action string) bool {
	actions = deref(actions)
	if actions == nil {
		return false
	}
	if actions.Kind == yaml.ScalarNode {
		return actions.Value == action
	}
	for _, a := range actions.Content {
		if deref(a).Value == action {
			return true
		}
	}
	return false
}

// secretRefs are the parameters a Resource refers to, and whether any
// literal in it holds a wildcard.
func secretRefs(n *yaml.Node) (refs []string, wildcard bool) {
	n = deref(n)
	if n == nil {
		return nil, false
	}
	if name, arg, ok := intrinsic(n); ok && name == "Ref" {
		return []string{deref(arg).Value}, false
	}
	if n.Kind == yaml.ScalarNode {
		return nil, strings.Contains(n.Value, "*")
	}
	seen := map[string]bool{}
	for _, c := range n.Content {
		r, w := secretRefs(c)
		wildcard = wildcard || w
		for _, x := range r {
			if !seen[x] {
				seen[x] = true
				refs = append(refs, x)
			}
		}
	}
	return refs, wildcard
}
