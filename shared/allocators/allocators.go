// Package allocators is the deployment's set of GameFabric Allocators: one
// client per allocate URL and one cached token source per Secrets Manager
// secret, so regions behind the same Allocator share its client and each
// secret is read, cached and refreshed on 401 on its own.
package allocators

import (
	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/secrets"
)

// Set serves allocation.Upstreams from the configuration. It is built once
// at cold start and never changes, so it needs no lock.
type Set struct {
	cfg     config.Allocate
	clients map[string]*gamefabric.Client   // by allocate URL
	tokens  map[string]*secrets.TokenSource // by secret id
}

var _ allocation.Upstreams = (*Set)(nil)

// New builds the clients and token sources of every configured Allocator
// and of the default one.
func New(cfg config.Allocate, doer gamefabric.Doer, sm secrets.SecretGetter) *Set {
	s := &Set{cfg: cfg, clients: map[string]*gamefabric.Client{}, tokens: map[string]*secrets.TokenSource{}}
	all := []config.Allocator{cfg.AllocatorFor("")}
	for _, a := range cfg.Allocators {
		all = append(all, a)
	}
	for _, a := range all {
		if s.clients[a.URL] == nil {
			s.clients[a.URL] = gamefabric.NewClient(doer, a.URL)
		}
		if s.tokens[a.TokenSecretID] == nil {
			s.tokens[a.TokenSecretID] = secrets.NewTokenSource(sm, a.TokenSecretID, cfg.TokenCacheTTL, nil)
		}
	}
	return s
}

// For is the Allocator serving region. Its ID is the allocate URL: what
// makes two entries the same Allocator, with one rate limit.
func (s *Set) For(region string) allocation.Upstream {
	a := s.cfg.AllocatorFor(region)
	return allocation.Upstream{ID: a.URL, Region: a.Region, Allocator: Allocator{Client: s.clients[a.URL]}, Tokens: s.tokens[a.TokenSecretID]}
}
