package allocation

import (
	"context"
	"errors"
	"sync"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
)

// Upstream is the Allocator that serves a region, ready to call: a
// GameFabric Allocator or an Agones allocator service. A GameFabric Region
// references one Allocator; several of our regions may share one, and then
// they share its rate limit.
type Upstream struct {
	// ID tells Allocators apart: regions with the same ID are served by
	// the same Allocator.
	ID string
	// Region is the Allocator's region string, sent exactly as it is.
	Region string
	// Kind is named in the region's attempts.
	Kind apishape.AllocatorKind
	// Credential names what Tokens reads ("token", "TLS credentials"), in
	// the attempt of a region not tried because it could not be read.
	Credential string
	// KeepsRooms: the Allocator places instances in rooms itself (an
	// Agones rooms Counter), so the room pool is not asked in its regions.
	KeepsRooms bool
	Allocator  Allocator
	Tokens     Tokens
}

// Upstreams says which Allocator serves each region (a lowercased name).
type Upstreams interface {
	For(region string) Upstream
}

// What an Upstream's Tokens read, as the attempts name it.
const (
	CredentialToken = "token"
	CredentialTLS   = "TLS credentials"
)

// oneAllocator serves every region from one Allocator under the region's
// own name: what Options.Allocator and Options.Tokens describe.
type oneAllocator struct {
	allocator Allocator
	tokens    Tokens
}

func (o oneAllocator) For(region string) Upstream {
	return Upstream{ID: "default", Region: region, Kind: apishape.AllocatorGameFabric, Credential: CredentialToken,
		Allocator: o.allocator, Tokens: o.tokens}
}

// credentials are the plan's Allocators and their tokens, read before the
// claim so that a credential problem leaves no record behind when no
// region can be asked at all.
type credentials struct {
	upstreams []Upstream        // per plan step
	token     map[string]string // by Upstream.ID
	err       map[string]error  // by Upstream.ID: why its token could not be read
}

// readCredentials reads the token of every Allocator in plan, concurrently
// (each is usually cached). It fails only when no Allocator has a token:
// permanently (INTERNAL) when every failure is a deployment problem, else
// SERVICE_UNAVAILABLE.
func (s *Service) readCredentials(ctx context.Context, plan []PlanStep) (*credentials, error) {
	c := &credentials{upstreams: make([]Upstream, len(plan)), token: map[string]string{}, err: map[string]error{}}
	distinct := map[string]Upstream{}
	for i, step := range plan {
		c.upstreams[i] = s.o.Upstreams.For(step.Region)
		distinct[c.upstreams[i].ID] = c.upstreams[i]
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for id, up := range distinct {
		wg.Go(func() {
			token, err := up.Tokens.Token(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				c.err[id] = err
				return
			}
			c.token[id] = token
		})
	}
	wg.Wait()
	if len(c.token) > 0 || len(plan) == 0 {
		return c, nil
	}
	errs := make([]error, 0, len(c.err))
	permanent := true
	for _, err := range c.err {
		errs = append(errs, err)
		permanent = permanent && isPermanent(err)
	}
	if permanent {
		return nil, internal("the allocator credential is missing or unusable", errors.Join(errs...))
	}
	return nil, unavailable("the allocator credential could not be read; nothing was allocated; retry", errors.Join(errs...))
}

// all is every token read, for redaction.
func (c *credentials) all() []string {
	out := make([]string, 0, len(c.token))
	for _, t := range c.token {
		out = append(out, t)
	}
	return out
}
