package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/gamefabric-alloc/allocsvc/shared/region"
)

// Allocator is the GameFabric Allocator that serves one of our regions: a
// GameFabric Region references one Allocator, and each Allocator has its
// own allocate URL, its own rotating tokens, its own rate limit and an
// opaque region string (its spec.region) that game servers register under.
type Allocator struct {
	// URL is the full allocate URL.
	URL string `json:"url"`
	// Region is the Allocator's region string, sent exactly as configured.
	Region string `json:"region"`
	// TokenSecretID names the Secrets Manager secret with its tokens.
	TokenSecretID string `json:"tokenSecretId"`
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
	return Allocator{URL: c.AllocateURL(), Region: ours, TokenSecretID: c.TokenSecretID}
}

// allocators reads GAMEFABRIC_ALLOCATORS: a JSON object mapping our region
// names (case-insensitive) to {url, region, tokenSecretId}. Every bad entry
// is named; unknown fields are errors, since a misspelt "tokenSecret"
// would otherwise silently send the wrong token.
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
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string]Allocator, len(doc))
	var problems []string
	for _, key := range keys {
		ours := region.Normalize(key)
		a, bad := parseAllocator(doc[key], ours, defaultSecret)
		switch {
		case !region.Valid(ours):
			// A key of any other shape could never be requested.
			bad = append(bad, "the region name must be "+region.Rule)
		case out[ours] != (Allocator{}):
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

// oneSecretPerURL: one URL is one Allocator, with one token list, so all
// its entries (and the default Allocator, when it is the same URL) must
// name the same secret; regions are told apart by their region strings.
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
		add(a.URL, a.TokenSecretID, ours)
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
		problems = append(problems, fmt.Sprintf("%s: %s is one Allocator with one token list, but its regions (%s) name different token secrets",
			name, url, strings.Join(regions, ", ")))
	}
	sort.Strings(problems)
	return problems
}

// parseAllocator reads one entry and fills in its defaults; it returns
// every problem with it.
func parseAllocator(raw json.RawMessage, ours, defaultSecret string) (Allocator, []string) {
	var a Allocator
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return a, []string{`must be an object with "url" and optional "region" and "tokenSecretId" strings (` + strings.TrimPrefix(err.Error(), "json: ") + ")"}
	}
	var bad []string
	a.URL, a.TokenSecretID = strings.TrimSpace(a.URL), strings.TrimSpace(a.TokenSecretID)
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
	return a, bad
}
