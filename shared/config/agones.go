package config

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
	"github.com/gamefabric-alloc/allocsvc/shared/region"
)

// Agones is an Agones allocator service's settings (an Allocator of kind
// "agones"), its defaults filled in.
type Agones struct {
	// TLSSecretID names the Secrets Manager secret holding the client
	// certificate, its key and the allocator's CA.
	TLSSecretID string
	Namespace   string
	// MatchLabels select the game servers; their values may hold
	// PlaceholderEnv and PlaceholderArmadaSet, replaced from the request's
	// gameServerVersion.
	MatchLabels map[string]string
	// RoomsCounter is the GameServers' Counter of rooms: a request that is
	// not dedicated takes a room on a server that has one free; "" = every
	// allocation takes a Ready game server of its own.
	RoomsCounter string
	// AnnotationPrefix + a payload field's name is that field's annotation.
	AnnotationPrefix string
	// UnallocatedStatus is the installation's httpUnallocatedStatusCode:
	// the status that says no game server was available.
	UnallocatedStatus int
}

// The placeholders matchLabels' values may use.
const (
	PlaceholderEnv       = "{env}"
	PlaceholderArmadaSet = "{armadaset}"
)

// agonesEntry is an entry's Agones members, as written.
type agonesEntry struct {
	Namespace         string            `json:"namespace,omitempty"`
	TLSSecretID       string            `json:"tlsSecretId,omitempty"`
	MatchLabels       map[string]string `json:"matchLabels,omitempty"`
	RoomsCounter      string            `json:"roomsCounter,omitempty"`
	AnnotationPrefix  string            `json:"annotationPrefix,omitempty"`
	UnallocatedStatus *int              `json:"unallocatedStatus,omitempty"`
}

// set names the members that are present.
func (e agonesEntry) set() []string {
	var names []string
	for _, m := range []struct {
		name string
		set  bool
	}{{"namespace", e.Namespace != ""}, {"tlsSecretId", e.TLSSecretID != ""}, {"matchLabels", e.MatchLabels != nil},
		{"roomsCounter", e.RoomsCounter != ""}, {"annotationPrefix", e.AnnotationPrefix != ""}, {"unallocatedStatus", e.UnallocatedStatus != nil}} {
		if m.set {
			names = append(names, m.name)
		}
	}
	return names
}

// Limits on an Agones entry: Kubernetes' own (label keys and values,
// namespace and counter names), so a typo fails the cold start rather than
// every allocation.
const (
	maxMatchLabels = 16
	maxPrefixName  = 40 // of an annotation key's name part, leaving room for the payload field
)

// Kubernetes' name rules, as loops: a package-level regexp would be
// compiled at every cold start of every function.
func dnsLabel(s string) bool     { return name(s, 63, lowerAlnum, "-", true) }
func dnsSubdomain(s string) bool { return name(s, 253, lowerAlnum, "-.", true) }
func labelName(s string) bool    { return name(s, 63, alnum, "-_.", true) }
func labelValue(s string) bool   { return s == "" || labelName(s) }

// prefixName is an annotation key's name part before the field's name.
func prefixName(s string) bool { return name(s, maxPrefixName, alnum, "-_.", false) && alnum(s[0]) }

func lowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }
func alnum(c byte) bool      { return lowerAlnum(c) || 'A' <= c && c <= 'Z' }

// name: 1-max bytes of ok or extra, beginning and ending with ok when
// okEnds.
func name(s string, max int, ok func(byte) bool, extra string, okEnds bool) bool {
	if s == "" || len(s) > max || okEnds && (!ok(s[0]) || !ok(s[len(s)-1])) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) && strings.IndexByte(extra, s[i]) < 0 {
			return false
		}
	}
	return true
}

// placeholders are the {...} in v.
func placeholders(v string) []string {
	var out []string
	for {
		i := strings.IndexByte(v, '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(v[i:], '}')
		if j < 0 {
			return append(out, v[i:])
		}
		out, v = append(out, v[i:i+j+1]), v[i+j+1:]
	}
}

// agonesProblems checks an Agones entry and fills in its defaults.
func agonesProblems(a *Allocator, e entry, ours string) []string {
	var bad []string
	if e.Region != "" || e.TokenSecretID != "" {
		bad = append(bad, `region and tokenSecretId are a GameFabric Allocator's; an Agones allocator is reached with tlsSecretId`)
	}
	if u, err := url.Parse(a.URL); a.URL == "" {
		bad = append(bad, "url is required")
	} else if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		bad = append(bad, fmt.Sprintf("url must be the allocator service's https:// URL (mutual TLS), without credentials, query or fragment, got %q", a.URL))
	}
	g := &Agones{TLSSecretID: strings.TrimSpace(e.TLSSecretID), Namespace: cmp.Or(e.Namespace, defaults.AgonesNamespace),
		MatchLabels: e.MatchLabels, RoomsCounter: e.RoomsCounter, AnnotationPrefix: cmp.Or(e.AnnotationPrefix, defaults.AgonesAnnotationPrefix),
		UnallocatedStatus: defaults.AgonesUnallocatedStatus}
	if e.UnallocatedStatus != nil {
		g.UnallocatedStatus = *e.UnallocatedStatus
	}
	if g.MatchLabels == nil {
		g.MatchLabels = defaults.AgonesMatchLabels()
	}
	if g.TLSSecretID == "" {
		bad = append(bad, `tlsSecretId is required: the secret with the allocator client's {"tls.crt", "tls.key", "ca.crt"}`)
	}
	if !dnsLabel(g.Namespace) {
		bad = append(bad, fmt.Sprintf("namespace must be a Kubernetes namespace name, got %q", g.Namespace))
	}
	if g.RoomsCounter != "" && !labelName(g.RoomsCounter) {
		bad = append(bad, fmt.Sprintf("roomsCounter must be a Counter's name (at most 63 letters, digits, - _ .), got %q", g.RoomsCounter))
	}
	if p := annotationPrefixProblem(g.AnnotationPrefix); p != "" {
		bad = append(bad, "annotationPrefix "+p)
	}
	switch s := g.UnallocatedStatus; {
	case s < 400 || s > 599:
		bad = append(bad, fmt.Sprintf("unallocatedStatus must be the installation's httpUnallocatedStatusCode, 400-599, got %d", s))
	case s == 401 || s == 403 || s == 409:
		bad = append(bad, fmt.Sprintf("unallocatedStatus %d would be read as a refusal of our certificate or as contention; use the default 429", s))
	}
	bad = append(bad, matchLabelsProblems(g.MatchLabels)...)
	a.Agones, a.Region = g, ours
	return bad
}

// matchLabelsProblems: 1-16 Kubernetes labels whose values, once the
// placeholders are replaced, are label values.
func matchLabelsProblems(labels map[string]string) []string {
	if len(labels) == 0 || len(labels) > maxMatchLabels {
		return []string{fmt.Sprintf("matchLabels must select by 1-%d labels", maxMatchLabels)}
	}
	var bad []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		v := labels[k]
		if !labelKey(k) {
			bad = append(bad, fmt.Sprintf("matchLabels key %q is not a Kubernetes label key", k))
			continue
		}
		for _, p := range placeholders(v) {
			if p != PlaceholderEnv && p != PlaceholderArmadaSet {
				bad = append(bad, fmt.Sprintf("matchLabels[%q] has the unknown placeholder %s: only %s and %s are replaced", k, p, PlaceholderEnv, PlaceholderArmadaSet))
			}
		}
		// Checked with the placeholders as the shortest values they take.
		if sample := strings.NewReplacer(PlaceholderEnv, "e", PlaceholderArmadaSet, "a").Replace(v); !labelValue(sample) {
			bad = append(bad, fmt.Sprintf("matchLabels[%q] is not a Kubernetes label value", k))
		}
	}
	return bad
}

// labelKey: [prefix/]name, prefix a DNS subdomain.
func labelKey(k string) bool {
	prefix, rest, found := strings.Cut(k, "/")
	if !found {
		return labelName(k)
	}
	return dnsSubdomain(prefix) && labelName(rest)
}

// annotationPrefixProblem: prefix + a payload field's name must be an
// annotation key.
func annotationPrefixProblem(p string) string {
	prefix, rest, found := strings.Cut(p, "/")
	if !found {
		prefix, rest = "", p
	}
	if (found && !dnsSubdomain(prefix)) || !prefixName(rest) {
		return fmt.Sprintf("must be [DNS subdomain/]name-start (at most %d letters, digits, - _ . after the slash), got %q", maxPrefixName, p)
	}
	return ""
}

// agonesRegions are the regions of name's entries of kind agones, sorted:
// all the ping refresher needs of GAMEFABRIC_ALLOCATORS, whose entries
// AllocateFunction checks (the refresher does not read the default
// Allocator's settings they are checked against).
func (r *reader) agonesRegions(name string) []string {
	raw := r.optional(name)
	if raw == "" {
		return nil
	}
	var doc map[string]struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		r.problem("%s must be a JSON object of Allocators by region (AllocateFunction says what is wrong with its entries)", name)
		return nil
	}
	var out []string
	for key, e := range doc {
		if e.Kind == KindAgones {
			out = append(out, region.Normalize(key))
		}
	}
	slices.Sort(out)
	return out
}
