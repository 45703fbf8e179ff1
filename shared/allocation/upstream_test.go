package allocation

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// setTokens gives the test service's one Allocator other tokens.
func setTokens(s *Service, t Tokens) {
	s.o.Tokens, s.o.Upstreams = t, oneAllocator{allocator: s.o.Allocator, tokens: t}
}

// splitAllocators serves the regions ids names from those Allocators (the
// rest from "default"), all through alloc, each with tokens unless
// tokensOf names its own. The region string is prefix + the region.
type splitAllocators struct {
	alloc    Allocator
	tokens   Tokens
	ids      map[string]string
	tokensOf map[string]Tokens
	prefix   string
}

func (s splitAllocators) For(region string) Upstream {
	id := s.ids[region]
	if id == "" {
		id = "default"
	}
	tokens := s.tokens
	if t, ok := s.tokensOf[id]; ok {
		tokens = t
	}
	return Upstream{ID: id, Region: s.prefix + region, Kind: apishape.AllocatorGameFabric, Credential: CredentialToken, Allocator: s.alloc, Tokens: tokens}
}

func TestAllocateSendsTheAllocatorsRegionString(t *testing.T) {
	alloc := &script{queue: map[string][]error{"gf-us-west": {status(503, 0)}, "gf-eu": {nil}}}
	svc, _ := newTestService(alloc)
	svc.o.Upstreams = splitAllocators{alloc: alloc, tokens: svc.o.Tokens, ids: map[string]string{"eu": "eu-allocator"}, prefix: "gf-"}
	res, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi-r", DesiredRegion: "us-west"})
	if err != nil || res.Record.Region != "eu" || !res.Record.FallbackUsed {
		t.Fatalf("Allocate = %+v, %v", res.Record, err)
	}
	if !reflect.DeepEqual(alloc.calls, []string{"gf-us-west", "gf-eu"}) {
		t.Fatalf("regions sent = %v", alloc.calls)
	}
	for _, a := range res.Record.Attempts {
		if a.AllocatorRegion != "gf-"+a.Region {
			t.Fatalf("attempt %+v does not say which region string was sent", a)
		}
	}
}

// A missing or unreadable secret fails only the regions of its Allocator.
func TestAllocateWithOneAllocatorsTokenMissing(t *testing.T) {
	outage := errors.New("connect: connection refused")
	tests := []struct {
		name      string
		euTokens  Tokens
		usTokens  Tokens
		wantCalls []string
		wantCode  gameinstance.Code
		wantState gameinstance.State // "" = no record
	}{
		{"primary's secret missing: the other Allocator serves", nil, failingTokens{permanentErr{outage}}, []string{"eu"}, "", gameinstance.StateAllocated},
		{"fallback's secret missing, primary has no capacity", failingTokens{permanentErr{outage}}, nil, []string{"us-west"}, gameinstance.CodeAllocationFailed, gameinstance.StateFailed},
		{"every secret missing", failingTokens{permanentErr{outage}}, failingTokens{permanentErr{outage}}, nil, gameinstance.CodeInternal, ""},
		{"one missing, one unreachable", failingTokens{permanentErr{outage}}, failingTokens{outage}, nil, gameinstance.CodeUnavailable, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			alloc := &script{queue: map[string][]error{"us-west": {status(503, 0)}, "eu": {nil}}}
			svc, store := newTestService(alloc)
			split := splitAllocators{alloc: alloc, tokens: svc.o.Tokens, ids: map[string]string{"eu": "eu-allocator"}, tokensOf: map[string]Tokens{}}
			if tc.euTokens != nil {
				split.tokensOf["eu-allocator"] = tc.euTokens
			}
			if tc.usTokens != nil {
				split.tokensOf["default"] = tc.usTokens
			}
			svc.o.Upstreams = split
			res, err := svc.Allocate(context.Background(), Request{GameInstanceID: "gi-t", DesiredRegion: "us-west"})
			if !reflect.DeepEqual(alloc.calls, tc.wantCalls) {
				t.Fatalf("calls = %v, want %v", alloc.calls, tc.wantCalls)
			}
			if got := gameinstance.CodeOf(err); err != nil && got != tc.wantCode || err == nil && tc.wantCode != "" {
				t.Fatalf("err = %v, want %s", err, tc.wantCode)
			}
			rec, ok := store.records["gi-t"]
			if ok != (tc.wantState != "") || rec.State != tc.wantState {
				t.Fatalf("left %+v, want state %q", rec, tc.wantState)
			}
			attempts := res.Record.Attempts
			var e *gameinstance.Error
			if errors.As(err, &e) {
				attempts = e.Attempts
			}
			for _, a := range attempts {
				if a.Status == 0 && !strings.Contains(a.Error, "token could not be read") {
					t.Errorf("untried attempt %+v does not say why", a)
				}
			}
		})
	}
}
