package gamefabric

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	regionname "github.com/gamefabric-alloc/allocsvc/shared/region"
)

// The Ping Service's answer schema is not public. This file alone knows
// the shape we read, so adapting to the real one is a change here only:
//
//	{"regions": {"us-west": [{"address": "203.0.113.10", "port": 7600, "protocol": "udp"}]}}
//
// Because the real answer may be richer, decoding is tolerant: unknown
// fields are ignored at every level, a protocol other than udp/tcp is
// passed through, and an unusable target or region is dropped and counted
// instead of failing the whole answer. Only an answer we cannot read at
// all (see DecodePing) is an error, so the refresher keeps its last good
// cache.

// PingTarget is one address a client can ping to measure latency to a region.
type PingTarget struct {
	Address  string `json:"address"`
	Port     int    `json:"port"`
	Protocol string `json:"protocol"`
}

// Bounds on what one answer may put into the cache. One region is one
// DynamoDB item: 64 targets of at most ~300 bytes each keep it near 20 KB,
// far below the 400 KB limit, and 256 such regions keep GET /v1/regions
// (~5 MB at worst) below Lambda's 6 MB response limit.
const (
	MaxPingRegions  = 256
	MaxPingTargets  = 64 // per region
	MaxPingProtocol = 16
)

// Ping is a decoded answer: the usable targets per region (lowercased)
// and what was left out.
type Ping struct {
	// Regions holds every region with a usable name, up to MaxPingRegions.
	// A region none of whose targets was usable has an empty list: it is
	// known, but has nothing to ping.
	Regions map[string][]PingTarget
	Report  PingReport
}

// PingReport counts what an answer held that we could not use. It is
// logged and returned by every refresh, so an answer in a shape we do not
// fully understand shows up there instead of silently emptying regions.
type PingReport struct {
	// TargetsDropped: no usable address, port or protocol.
	TargetsDropped int `json:"targetsDropped"`
	// TargetsOverLimit: usable, but beyond MaxPingTargets in their region.
	TargetsOverLimit int `json:"targetsOverLimit"`
	// RegionsOmitted: listed, but without a usable target.
	RegionsOmitted int `json:"regionsOmitted"`
	// RegionsSkipped: a name no caller could request (empty, too long,
	// other characters), or targets that are not a list.
	RegionsSkipped int `json:"regionsSkipped"`
	// RegionsOverLimit: after the first MaxPingRegions in name order.
	RegionsOverLimit int `json:"regionsOverLimit"`
	// RegionsMerged: names equal to another one but for case; their
	// targets were merged.
	RegionsMerged int `json:"regionsMerged"`
	// FirstProblem describes the first target or region left out.
	FirstProblem string `json:"firstProblem,omitempty"`
}

// Problems reports whether anything was left out for being unusable or
// over a limit (not merely a region without servers).
func (r PingReport) Problems() bool {
	return r.TargetsDropped+r.TargetsOverLimit+r.RegionsSkipped+r.RegionsOverLimit > 0
}

func (r *PingReport) note(format string, args ...any) {
	if r.FirstProblem == "" {
		r.FirstProblem = gameinstance.Clip(fmt.Sprintf(format, args...), MaxErrorText)
	}
}

const pingShape = `{"regions": {"<region>": [{"address": "<ip or host>", "port": <1-65535>, "protocol": "<optional, default udp>"}]}}`

// DecodePing reads a Ping Service answer. It fails when the body is too
// large, is not JSON or has no "regions" object, and when not one target
// is usable although some were left out as unusable: that is a shape we
// do not understand, not an installation without servers, and must not
// empty the cache or mark every region as having no ping targets.
func DecodePing(raw []byte) (Ping, error) {
	if len(raw) > MaxResponseBytes {
		return Ping{}, pingError("ping response exceeds %d bytes", MaxResponseBytes)
	}
	var doc struct {
		Regions json.RawMessage `json:"regions"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return Ping{}, pingError("ping response does not parse (%s)", strings.TrimPrefix(err.Error(), "json: "))
	}
	var listed map[string]json.RawMessage
	if len(doc.Regions) == 0 || json.Unmarshal(doc.Regions, &listed) != nil || listed == nil {
		return Ping{}, pingError("ping response has no \"regions\" object")
	}
	names := make([]string, 0, len(listed))
	for name := range listed {
		names = append(names, name)
	}
	// Sorted, so which regions are merged, and which are over the limit,
	// does not depend on map order.
	sort.Strings(names)
	p := Ping{Regions: map[string][]PingTarget{}}
	for _, name := range names {
		// A region listed under a name no caller could request could never
		// be allocated in.
		region := regionname.Normalize(name)
		if !regionname.Valid(region) {
			p.Report.RegionsSkipped++
			p.Report.note("region %q: not a region name a caller could request", gameinstance.Clip(name, regionname.MaxName))
			continue
		}
		prev, merged := p.Regions[region]
		if !merged && len(p.Regions) == MaxPingRegions {
			p.Report.RegionsOverLimit++
			p.Report.note("region %q: more than %d regions", region, MaxPingRegions)
			continue
		}
		var list []json.RawMessage
		if json.Unmarshal(listed[name], &list) != nil {
			p.Report.RegionsSkipped++
			p.Report.note("region %q: targets are not a list", region)
			continue
		}
		if merged {
			p.Report.RegionsMerged++
		}
		p.Regions[region] = decodeTargets(region, list, prev, &p.Report)
	}
	usable := 0
	for _, targets := range p.Regions {
		if len(targets) == 0 {
			p.Report.RegionsOmitted++
		}
		usable += len(targets)
	}
	if usable == 0 && p.Report.TargetsDropped+p.Report.RegionsSkipped > 0 {
		return Ping{}, pingError("not one listed ping target is usable (first problem: %s)", p.Report.FirstProblem)
	}
	return p, nil
}

// decodeTargets appends region's usable targets from list to into,
// skipping duplicates.
func decodeTargets(region string, list []json.RawMessage, into []PingTarget, report *PingReport) []PingTarget {
	if into == nil {
		into = []PingTarget{}
	}
	for i, item := range list {
		t, problem := decodeTarget(item)
		switch {
		case problem != "":
			report.TargetsDropped++
			report.note("region %q target %d: %s", region, i, problem)
		case slices.Contains(into, t):
		case len(into) == MaxPingTargets:
			report.TargetsOverLimit++
			report.note("region %q: more than %d targets", region, MaxPingTargets)
		default:
			into = append(into, t)
		}
	}
	return into
}

// decodeTarget reads one target, or says why it is not usable.
func decodeTarget(raw json.RawMessage) (PingTarget, string) {
	var doc struct {
		Address  string `json:"address"`
		Port     *int   `json:"port"`
		Protocol string `json:"protocol"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return PingTarget{}, "not an object with a string address, an integer port and a string protocol"
	}
	t := PingTarget{Address: strings.TrimSpace(doc.Address), Protocol: strings.ToLower(strings.TrimSpace(doc.Protocol))}
	if t.Protocol == "" {
		t.Protocol = "udp"
	}
	switch {
	case t.Address == "" || len(t.Address) > MaxAddressLen || strings.ContainsFunc(t.Address, unusable):
		return PingTarget{}, "address must be an IP or host name"
	case doc.Port == nil || *doc.Port < 1 || *doc.Port > 65535:
		return PingTarget{}, "port must be 1-65535"
	case len(t.Protocol) > MaxPingProtocol || strings.ContainsFunc(t.Protocol, unusable):
		return PingTarget{}, fmt.Sprintf("protocol must be a word of at most %d bytes", MaxPingProtocol)
	}
	t.Port = *doc.Port
	return t, ""
}

// unusable runes in an address or protocol: whitespace, control
// characters, and the slash of a URL or CIDR rather than a host.
func unusable(r rune) bool { return r == '/' || unicode.IsSpace(r) || unicode.IsControl(r) }

func pingError(format string, args ...any) *Error {
	return &Error{Kind: KindDecode, Message: fmt.Sprintf(format, args...) + "; expected " + pingShape}
}

// PingClient fetches ping targets from a GameFabric Ping Service.
type PingClient struct {
	http Doer
	url  string
}

// NewPingClient calls url (the Ping Service's full URL) through doer.
func NewPingClient(doer Doer, url string) *PingClient {
	return &PingClient{http: doer, url: url}
}

// Fetch returns the ping targets per region. Errors are *Error.
func (c *PingClient) Fetch(ctx context.Context, token string) (Ping, error) {
	raw, err := call(ctx, c.http, http.MethodGet, c.url, token, nil)
	if err == nil {
		var p Ping
		if p, err = DecodePing(raw); err == nil {
			return p, nil
		}
	}
	var e *Error
	if errors.As(err, &e) {
		e.Service = "ping service"
	}
	return Ping{}, err
}
