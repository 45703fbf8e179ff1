// Package allocators is the deployment's set of Allocators: GameFabric
// Allocators (one client per allocate URL, one cached token source per
// Secrets Manager secret) and Agones allocator services (one client per
// URL, one cached TLS identity per secret), so regions behind the same
// Allocator share its client and each secret is read, cached and
// refreshed on its own.
package allocators

import (
	"github.com/gamefabric-alloc/allocsvc/shared/agones"
	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/secrets"
)

// Set serves allocation.Upstreams from the configuration. It is built once
// at cold start and never changes, so it needs no lock.
type Set struct {
	cfg        config.Allocate
	clients    map[string]*gamefabric.Client   // by allocate URL
	tokens     map[string]*secrets.TokenSource // by secret id
	agones     map[string]*agones.Client       // by allocator service URL
	identities map[string]*Identities          // by secret id
}

var _ allocation.Upstreams = (*Set)(nil)

// New builds the clients and credential sources of every configured
// Allocator and of the default one.
func New(cfg config.Allocate, doer gamefabric.Doer, sm secrets.SecretGetter) *Set {
	s := &Set{cfg: cfg, clients: map[string]*gamefabric.Client{}, tokens: map[string]*secrets.TokenSource{},
		agones: map[string]*agones.Client{}, identities: map[string]*Identities{}}
	all := []config.Allocator{cfg.AllocatorFor("")}
	for _, a := range cfg.Allocators {
		all = append(all, a)
	}
	for _, a := range all {
		switch {
		case a.Agones != nil:
			if s.agones[a.URL] == nil {
				s.agones[a.URL] = agones.NewClient(a.URL)
			}
			if id := a.Agones.TLSSecretID; s.identities[id] == nil {
				s.identities[id] = secrets.NewSource(sm, id, cfg.TokenCacheTTL, nil, agones.ParseIdentity)
			}
		default:
			if s.clients[a.URL] == nil {
				s.clients[a.URL] = gamefabric.NewClient(doer, a.URL)
			}
			if s.tokens[a.TokenSecretID] == nil {
				s.tokens[a.TokenSecretID] = secrets.NewTokenSource(sm, a.TokenSecretID, cfg.TokenCacheTTL, nil)
			}
		}
	}
	return s
}

// For is the Allocator serving region. Its ID is its URL: what makes two
// entries the same Allocator, with one rate limit.
func (s *Set) For(region string) allocation.Upstream {
	a := s.cfg.AllocatorFor(region)
	if g := a.Agones; g != nil {
		ids := s.identities[g.TLSSecretID]
		return allocation.Upstream{ID: a.URL, Region: a.Region, Kind: gameinstance.AllocatorAgones, Credential: allocation.CredentialTLS,
			KeepsRooms: g.RoomsCounter != "", Allocator: AgonesAllocator{Client: s.agones[a.URL], Identities: ids, Settings: *g},
			Tokens: agonesTokens{ids}}
	}
	return allocation.Upstream{ID: a.URL, Region: a.Region, Kind: gameinstance.AllocatorGameFabric, Credential: allocation.CredentialToken,
		Allocator: Allocator{Client: s.clients[a.URL]}, Tokens: s.tokens[a.TokenSecretID]}
}
