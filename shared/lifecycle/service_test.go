package lifecycle

import (
	"testing"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

func TestHoldsToken(t *testing.T) {
	h := gameinstance.HashToken
	candidates := []string{h("step-1"), h("step-2")}
	tests := []struct {
		name  string
		rec   gameinstance.Record
		token string
		want  bool
	}{
		{"recorded server's token", gameinstance.Record{State: gameinstance.StateLinked, PartnerGameTokenHash: h("step-2")}, "step-2", true},
		{"wrong token", gameinstance.Record{State: gameinstance.StateLinked, PartnerGameTokenHash: h("step-2")}, "step-3", false},
		{"in doubt: any step's token", gameinstance.Record{State: gameinstance.StateAllocating, PartnerGameTokenHash: h("step-1"), CandidateTokenHashes: candidates}, "step-2", true},
		{"in doubt: not a step's token", gameinstance.Record{State: gameinstance.StateAllocating, PartnerGameTokenHash: h("step-1"), CandidateTokenHashes: candidates}, "other", false},
		// Once recorded, an orphan from a timed-out step is refused even if
		// candidates were somehow left behind.
		{"recorded: orphan's token", gameinstance.Record{State: gameinstance.StateAllocated, PartnerGameTokenHash: h("step-2"), CandidateTokenHashes: candidates}, "step-1", false},
		{"empty token", gameinstance.Record{State: gameinstance.StateAllocated, PartnerGameTokenHash: h("x")}, "", false},
	}
	for _, tc := range tests {
		if got := holdsToken(tc.rec, tc.token); got != tc.want {
			t.Errorf("%s: holdsToken = %v, want %v", tc.name, got, tc.want)
		}
	}
}
