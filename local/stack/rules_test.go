package stack

import (
	"strings"
	"testing"
)

func TestRuleQueueNameIsAValidQueueName(t *testing.T) {
	if got := ruleQueueName("MatchmakingRule", "MatchmakingFunction"); got != "local-rule-MatchmakingRule-MatchmakingFunction" {
		t.Errorf("got %s", got)
	}
	long := ruleQueueName(strings.Repeat("R", 70), "target.v2")
	if len(long) != 80 || strings.ContainsAny(long, ".") {
		t.Errorf("%q: SQS takes 80 characters of letters, digits, - and _", long)
	}
}
