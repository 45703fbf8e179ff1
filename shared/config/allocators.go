package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/gamefabric-alloc/allocsvc/shared/region"
)

// Allocator is the Allocator that serves one of our regions. A GameFabric
// Region references one GameFabric Allocator, and each Allocator has its
// own allocate URL, its own rotating tokens, its own rate limit and an
// opaque region string (its spec.region) that game servers register under.
// An Agones allocator service (Kind "agones") is a studio's own cluster,
// reached over mutual TLS; its settings are in Agones.
type Allocator struct {
	// Kind is KindGameFabric or KindAgones.
	Kind string
	// URL is the full allocate URL (GameFabric), or the allocator
	// service's base URL (Agones: we POST {URL}/gameserverallocation).
	URL string
	// Region is the Allocator's region string, sent exactly as configured
	// (GameFabric only).
	Region string
	// TokenSecretID names the Secrets Manager secret with its tokens
	// (GameFabric only).
	TokenSecretID string
	// Agones is an Agones allocator service's settings, nil for GameFabric.
	Agones *Agones
}

// The Allocator kinds of GAMEFABRIC_ALLOCATORS' "kind".
const (
	KindGameFabric = "gamefabric"
	KindAgones     = "agones"
)

// credential is what authenticates us to the Allocator: one URL is one
// Allocator, so all its regions must name the same one.
func (a Allocator) credential() string {
	if a.Agones != nil {
		return KindAgones + " " + a.Agones.TLSSecretID
	}
	return a.TokenSecretID
}

// Limits on GAMEFABRIC_ALLOCATORS. Lambda's whole environment is 4 KB, so
// these only matter locally; they keep a typo from becoming a huge error.
const (
	maxAllocators        = 64
	maxAllocatorRegion   = 255
	allocatorsProblemCap = 10
)

// AllocatorFor is the Allocator serving region (a lowercased region name):
// its GAMEFABRIC_ALLOCATORS entry, or else the default one (GAMEFABRIC_URL +
// GAMEFABRIC_ALLOCATE_PATH with ALLOCATOR_TOKEN_SECRET_ID) asked for region
// under our own name. Entries have their defaults filled in when loaded.
func (c Allocate) AllocatorFor(ours string) Allocator {
	if a, ok := c.Allocators[ours]; ok {
		return a
	}
	return Allocator{Kind: KindGameFabric, URL: c.AllocateURL(), Region: ours, TokenSecretID: c.TokenSecretID}
}

// allocators reads GAMEFABRIC_ALLOCATORS: a JSON object mapping our region
// names (case-insensitive) to {url, region, tokenSecretId} (a GameFabric
// Allocator) or {"kind": "agones", url, tlsSecretId, ...} (agones.go).
// Every bad entry is named; unknown fields are errors, since a misspelt
// "tokenSecret" would otherwise silently send the wrong token.
func (r *reader) allocators(name, defaultURL, defaultSecret string) map[string]Allocator {
	raw := r.optional(name)
	if raw == "" {
		return nil
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &doc); err != nil || doc == nil {
		r.problem(`%s must be a JSON object such as {"us-west": {"url": "https://...", "region": "prod-us-west", "tokenSecretId": "arn:..."}}`, name)
		return nil
	}
	if len(doc) > maxAllocators {
		r.problem("%s lists %d regions, at most %d are allowed", name, len(doc), maxAllocators)
		return nil
	}
	keys := slices.Sorted(maps.Keys(doc))
	out := make(map[string]Allocator, len(doc))
	var problems []string
	for _, key := range keys {
		ours := region.Normalize(key)
		a, bad := parseAllocator(doc[key], ours, defaultSecret)
		switch {
		case !region.Valid(ours):
			// A key of any other shape could never be requested.
			bad = append(bad, "the region name must be "+region.Rule)
		case out[ours].URL != "":
			bad = append(bad, "the region is listed twice (names are case-insensitive)")
		}
		if len(bad) > 0 {
			problems = append(problems, fmt.Sprintf("%s[%q]: %s", name, key, strings.Join(bad, ", ")))
			continue
		}
		out[ours] = a
	}
	problems = append(problems, oneSecretPerURL(name, out, defaultURL, defaultSecret)...)
	if len(problems) > allocatorsProblemCap {
		problems = append(problems[:allocatorsProblemCap], fmt.Sprintf("%s: %d more bad entries", name, len(problems)-allocatorsProblemCap))
	}
	for _, p := range problems {
		r.problem("%s", p)
	}
	return out
}

// oneSecretPerURL: one URL is one Allocator, with one token list (or one
// client certificate), so all its entries (and the default Allocator, when
// it is the same URL) must name the same secret and kind; regions are told
// apart by their region strings.
func oneSecretPerURL(name string, entries map[string]Allocator, defaultURL, defaultSecret string) []string {
	secrets := map[string]map[string][]string{} // url → secret → regions
	add := func(url, secret, region string) {
		if secrets[url] == nil {
			secrets[url] = map[string][]string{}
		}
		secrets[url][secret] = append(secrets[url][secret], region)
	}
	add(defaultURL, defaultSecret, "(the default Allocator)")
	for ours, a := range entries {
		add(a.URL, a.credential(), ours)
	}
	var problems []string
	for url, bySecret := range secrets {
		if len(bySecret) < 2 {
			continue
		}
		var regions []string
		for _, rs := range bySecret {
			regions = append(regions, rs...)
		}
		sort.Strings(regions)
		problems = append(problems, fmt.Sprintf("%s: %s is one Allocator with one token list, but its regions (%s) name different token secrets or kinds",
			name, url, strings.Join(regions, ", ")))
	}
	sort.Strings(problems)
	return problems
}

// entry is an entry as written: every member either kind may have, so one
// decode with unknown fields refused reads both, and the kind's rules say
// which members it may use.
type entry struct {
	Kind          string `json:"kind,omitempty"`
	URL           string `json:"url"`
	Region        string `json:"region,omitempty"`
	TokenSecretID string `json:"tokenSecretId,omitempty"`
	agonesEntry
}

// MarshalJSON writes a as its GAMEFABRIC_ALLOCATORS entry (for tools and
// tests that build the variable).
func (a Allocator) MarshalJSON() ([]byte, error) {
	e := entry{Kind: a.Kind, URL: a.URL, Region: a.Region, TokenSecretID: a.TokenSecretID}
	if g := a.Agones; g != nil {
		status := g.UnallocatedStatus
		e.Region, e.agonesEntry = "", agonesEntry{Namespace: g.Namespace, TLSSecretID: g.TLSSecretID, MatchLabels: g.MatchLabels,
			RoomsCounter: g.RoomsCounter, AnnotationPrefix: g.AnnotationPrefix, UnallocatedStatus: &status}
	}
	return json.Marshal(e)
}

// parseAllocator reads one entry and fills in its defaults; it returns
// every problem with it.
func parseAllocator(raw json.RawMessage, ours, defaultSecret string) (Allocator, []string) {
	var e entry
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return Allocator{}, []string{`must be an object with "url" and optional "kind", "region" and "tokenSecretId" ` +
			`(or, for "kind": "agones", "tlsSecretId", "namespace", "matchLabels", "roomsCounter", "annotationPrefix", "unallocatedStatus") (` +
			strings.TrimPrefix(err.Error(), "json: ") + ")"}
	}
	a := Allocator{Kind: cmp.Or(e.Kind, KindGameFabric), URL: strings.TrimSpace(e.URL), Region: e.Region, TokenSecretID: strings.TrimSpace(e.TokenSecretID)}
	switch a.Kind {
	case KindGameFabric:
		return a, gameFabricProblems(&a, e, ours, defaultSecret)
	case KindAgones:
		return a, agonesProblems(&a, e, ours)
	}
	return a, []string{fmt.Sprintf(`kind must be %q (the default) or %q, got %q`, KindGameFabric, KindAgones, e.Kind)}
}

// gameFabricProblems checks a GameFabric Allocator's entry and fills in
// its defaults.
func gameFabricProblems(a *Allocator, e entry, ours, defaultSecret string) []string {
	var bad []string
	if names := e.agonesEntry.set(); len(names) > 0 {
		bad = append(bad, strings.Join(names, ", ")+` apply to "kind": "agones" only`)
	}
	if a.URL == "" {
		bad = append(bad, "url is required")
	} else if p := urlProblem(a.URL); p != "" {
		bad = append(bad, "url "+p)
	}
	switch {
	case a.Region == "":
		a.Region = ours
	case len(a.Region) > maxAllocatorRegion || strings.TrimSpace(a.Region) != a.Region || strings.IndexFunc(a.Region, unicode.IsControl) >= 0:
		bad = append(bad, fmt.Sprintf("region must be the Allocator's region string: at most %d bytes, no surrounding spaces or control characters", maxAllocatorRegion))
	}
	if a.TokenSecretID == "" {
		a.TokenSecretID = defaultSecret
	}
	return bad
}
