// Package allocation is the domain: it validates an allocation request,
// claims the game instance so only one upstream allocation can happen, asks
// GameFabric region by region, and records the outcome.
package allocation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/region"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
)

// Request is the body of POST /v1/allocations: the public shape, as
// allocclient sends it.
type Request = apishape.AllocateRequest

// Field limits. They keep one record far below DynamoDB's 400 KB item limit
// and reject garbage early with a message that names the field.
const (
	MaxBodyBytes          = 64 << 10
	maxGameServerVersion  = 256
	maxServerArgs         = 8 << 10
	minPartnerGameToken   = 32 // characters; a minted one has 43 (256 bits)
	maxPartnerGameToken   = 1 << 10
	maxPartnerSocialToken = 8 << 10
	maxLabelValue         = 63 // env and armadaset travel as Kubernetes label values
	maxPreferredRegions   = 10
	MaxPlayers            = 200
	MaxLatencyRegions     = 50
	MaxLatencyMs          = 60000
)

// isLabelValue reports whether v matches ^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$
// (a Kubernetes label value, length apart). A loop rather than a
// package-level regexp, which every function would compile at each cold
// start.
func isLabelValue(v string) bool {
	if v == "" || !isAlnum(v[0]) || !isAlnum(v[len(v)-1]) {
		return false
	}
	for i := 1; i < len(v)-1; i++ {
		if c := v[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// DecodeRequest parses a request body strictly: one JSON object, known fields only.
func DecodeRequest(body []byte) (Request, error) {
	if len(body) > MaxBodyBytes {
		return Request{}, invalid("request body exceeds %d bytes", MaxBodyBytes)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return Request{}, invalid("request body is empty; expected a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var req Request
	if err := dec.Decode(&req); err != nil {
		return Request{}, invalid("request body is not a valid allocation request: %s", describeJSONError(err))
	}
	if !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		return Request{}, invalid("request body must be a JSON object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Request{}, invalid("request body has data after the JSON object")
	}
	return req, nil
}

func describeJSONError(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return fmt.Sprintf("field %q must be a %s", typeErr.Field, typeErr.Type)
	}
	// encoding/json reports unknown fields as `json: unknown field "x"`.
	return strings.TrimPrefix(err.Error(), "json: ")
}

// Defaults are the configured fallbacks (the plugin's fallback* settings)
// and region-selection limits (config.Allocate.Request).
type Defaults struct{ defaults.Request }

// Spec is a validated request with every rule applied.
type Spec struct {
	GameInstanceID string
	// Plan is the attempt order, each region with why it is there.
	Plan []PlanStep
	// LatencyRelaxed: every region exceeded the latency cap, so the plan
	// uses the unfiltered latency ranking.
	LatencyRelaxed bool
	Environment    string
	ArmadaSet      string
	// Fingerprint identifies the request for idempotency checks.
	Fingerprint gameinstance.Fingerprint
	// PartnerGameToken is empty when the caller gave none (one is minted).
	PartnerGameToken   string
	PartnerSocialToken string
	// Scheduling is the room order, Packed unless the request says
	// otherwise (the fingerprint keeps "" for the default).
	Scheduling gameinstance.Scheduling
	// QueueTimeout > 0: a plan that ends only short of capacity waits in
	// the placement queue, this long from the first attempt.
	QueueTimeout time.Duration
	// Cap is the latency cap in force for Plan (0 = none); each attempt
	// records it.
	Cap float64
	// Session is a GameLift placement's game session, for the payload.
	Session *gameinstance.GameSession
	// routes re-plans a queued placement as its latency cap relaxes.
	routes routes
	// roomsListed is the first region's free rooms, listed while the claim
	// was written (Service.listRoomsAhead); nil: listed when tried.
	roomsListed <-chan RoomListing
}

// Resolve validates req and applies the version and region rules. Every
// problem is reported at once.
func (d Defaults) Resolve(req Request) (Spec, error) { return d.resolve(req, origin{}) }

// resolve is Resolve for a request from o: an API caller's, a FlexMatch
// match's or a GameLift placement's; the fingerprint keeps them apart. A
// GameLift placement's regions are its queue's alone: FALLBACK_REGION is
// not added to them.
func (d Defaults) resolve(req Request, o origin) (Spec, error) {
	if o.session != nil {
		d.Region = ""
	}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	if p := gameinstance.IDProblem(req.GameInstanceID); p != "" {
		add("%s", p)
	}

	desired := strings.ToLower(strings.TrimSpace(req.DesiredRegion))
	if !validRegion(desired) {
		add("desiredRegion must be %s", region.Rule)
	}
	sel, problems2 := d.selectRegions(req, desired)
	problems = append(problems, problems2...)

	version := strings.TrimSpace(req.GameServerVersion)
	var env, set string
	var err error
	if len(version) > maxGameServerVersion {
		add("gameServerVersion must be at most %d characters", maxGameServerVersion)
	} else {
		env, set, err = ParseVersion(version, d.Environment, d.ArmadaSet)
		if err != nil {
			add("%s", err)
		}
	}

	if len(req.ServerArgs) > maxServerArgs {
		add("serverArgs must be at most %d bytes", maxServerArgs)
	}
	// A caller's token is the game server's only credential on routes the
	// gateway does not authenticate: it must not be guessable.
	if t := req.PartnerGameToken; t != "" && (len(t) < minPartnerGameToken || len(t) > maxPartnerGameToken || !gameinstance.IsBearerToken(t)) {
		add("partnerGameToken must be %d-%d characters of letters, digits and - . _ ~ + / (then = padding), or left out to have one minted",
			minPartnerGameToken, maxPartnerGameToken)
	}
	if len(req.PartnerSocialToken) > maxPartnerSocialToken {
		add("partnerSocialToken must be at most %d bytes", maxPartnerSocialToken)
	}
	scheduling, stored := gameinstance.SchedulingPacked, gameinstance.Scheduling("")
	switch gameinstance.Scheduling(req.Scheduling) {
	case "", gameinstance.SchedulingPacked:
	case gameinstance.SchedulingDistributed:
		scheduling, stored = gameinstance.SchedulingDistributed, gameinstance.SchedulingDistributed
	default:
		add("scheduling must be %q or %q", gameinstance.SchedulingPacked, gameinstance.SchedulingDistributed)
	}
	if len(problems) > 0 {
		return Spec{}, invalid("%s", strings.Join(problems, "; "))
	}
	spec := Spec{
		GameInstanceID: req.GameInstanceID,
		Plan:           sel.plan,
		LatencyRelaxed: sel.relaxed,
		Environment:    env,
		ArmadaSet:      set,
		Fingerprint: gameinstance.Fingerprint{
			DesiredRegion:     desired,
			GameServerVersion: version,
			ServerArgs:        req.ServerArgs,
			RegionInputs:      sel.digest,
			Scheduling:        stored,
			Dedicated:         req.Dedicated,
			Match:             o.match,
			GameLift:          o.digest(),
		},
		Session:            o.gameSession(),
		PartnerGameToken:   req.PartnerGameToken,
		PartnerSocialToken: req.PartnerSocialToken,
		Scheduling:         scheduling,
		QueueTimeout:       sel.queueTimeout,
		Cap:                sel.cap,
		routes:             sel.routes,
	}
	return spec, nil
}

// ParseVersion splits "<environment>::<armadaSet>" on the first "::". A
// missing or empty part takes its fallback. A version without "::" is the
// environment alone.
func ParseVersion(version, fallbackEnv, fallbackSet string) (env, set string, err error) {
	env, set, _ = strings.Cut(strings.TrimSpace(version), "::")
	env, set = strings.TrimSpace(env), strings.TrimSpace(set)
	if env == "" {
		env = fallbackEnv
	}
	if set == "" {
		set = fallbackSet
	}
	var missing []string
	for _, p := range []struct{ name, value, fallback string }{
		{"environment", env, "FALLBACK_ENVIRONMENT"},
		{"armada set", set, "FALLBACK_ARMADA_SET"},
	} {
		switch {
		case p.value == "":
			missing = append(missing, fmt.Sprintf("gameServerVersion has no %s and %s is not configured (expected <environment>::<armadaSet>)", p.name, p.fallback))
		case len(p.value) > maxLabelValue || !isLabelValue(p.value):
			missing = append(missing, fmt.Sprintf("gameServerVersion %s %q must be a label value: at most %d letters, digits, . _ -, starting and ending alphanumeric", p.name, p.value, maxLabelValue))
		}
	}
	if len(missing) > 0 {
		return "", "", errors.New(strings.Join(missing, "; "))
	}
	return env, set, nil
}
