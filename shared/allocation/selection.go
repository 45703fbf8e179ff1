package allocation

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/region"
)

func validRegion(r string) bool {
	return r == "" || region.Valid(r)
}

type selection struct {
	plan         []PlanStep
	relaxed      bool
	digest       string
	queueTimeout time.Duration
	cap          float64
	routes       routes
}

// selectRegions validates the region-selection fields and builds the plan.
func (d Defaults) selectRegions(req Request, desired string) (selection, []string) {
	preferred, problems := preferredRegions(req, desired)
	problems = append(problems, latencyProblems(req.PlayerLatencies)...)
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	latencyCap := d.MaxPlayerLatencyMs
	if m := req.MaxPlayerLatencyMs; m != nil {
		if *m <= 0 || *m > MaxLatencyMs {
			add("maxPlayerLatencyMs must be more than 0 and at most %d", MaxLatencyMs)
		}
		latencyCap = *m
	}
	queueTimeout := d.QueueTimeout
	if q := req.QueueTimeoutSeconds; q != nil {
		if *q < 0 || *q > maxQueueTimeoutSeconds {
			add("queueTimeoutSeconds must be 0-%d", maxQueueTimeoutSeconds)
		}
		queueTimeout = time.Duration(*q) * time.Second
	}
	problems = append(problems, policyProblems(req)...)
	if len(problems) > 0 {
		return selection{}, problems
	}
	if len(req.LatencyPolicies) > 0 {
		latencyCap = req.LatencyPolicies[0].MaxPlayerLatencyMs
	}

	maxRegions := d.MaxAttempts
	if len(preferred) == 0 && len(req.PlayerLatencies) == 0 && normalizeRegion(d.Region) == "" {
		return selection{}, []string{"desiredRegion, preferredRegions or playerLatencies is required because FALLBACK_REGION is not configured"}
	}
	var sel selection
	if queueTimeout > 0 {
		sel = queuedSelection(req, preferred, normalizeRegion(d.Region), maxRegions, latencyCap)
	} else {
		ranked, relaxed := RankRegions(req.PlayerLatencies, latencyCap)
		sel = selection{plan: BuildPlan(preferred, ranked, d.Region, maxRegions), relaxed: relaxed && len(preferred) == 0}
		if !relaxed {
			sel.cap = latencyCap
		}
	}
	sel.queueTimeout = queueTimeout
	sel.digest = regionInputsDigest(req, preferred, desired)
	return sel, nil
}

// preferredRegions is the request's region preference (desiredRegion or
// preferredRegions, normalised), with what is wrong with it.
func preferredRegions(req Request, desired string) (preferred, problems []string) {
	preferred = make([]string, 0, len(req.PreferredRegions))
	for _, r := range req.PreferredRegions {
		r = normalizeRegion(r)
		if r == "" || !validRegion(r) {
			problems = append(problems, "preferredRegions entries must be region names: "+region.Rule)
			break
		}
		preferred = append(preferred, r)
	}
	switch {
	case len(req.PreferredRegions) > maxPreferredRegions:
		problems = append(problems, fmt.Sprintf("preferredRegions may list at most %d regions", maxPreferredRegions))
	case desired != "" && len(preferred) > 0 && !(len(preferred) == 1 && preferred[0] == desired):
		problems = append(problems, "give desiredRegion or preferredRegions, not both")
	case desired != "" && len(preferred) == 0:
		preferred = []string{desired}
	}
	return preferred, problems
}

// latencyProblems is what is wrong with playerLatencies (the first bad
// player only, as each would say the same).
func latencyProblems(players []PlayerLatency) []string {
	var problems []string
	if len(players) > MaxPlayers {
		problems = append(problems, fmt.Sprintf("playerLatencies may list at most %d players", MaxPlayers))
	}
	for i, p := range players {
		if len(p.LatencyMs) == 0 || len(p.LatencyMs) > MaxLatencyRegions {
			return append(problems, fmt.Sprintf("playerLatencies[%d].latencyMs must list 1-%d regions", i, MaxLatencyRegions))
		}
		for region, ms := range p.LatencyMs {
			if !ValidLatency(region, ms) {
				return append(problems, fmt.Sprintf("playerLatencies[%d].latencyMs must map region names to 0-%d ms", i, MaxLatencyMs))
			}
		}
	}
	return problems
}

// queuedSelection is a queued placement's plan: never relaxed, each
// region (the fallback too) under the cap of the policy in force, which
// is the request's policies, else its (or the default) maxPlayerLatencyMs
// for the whole wait.
func queuedSelection(req Request, preferred []string, fallback string, maxRegions int, latencyCap float64) selection {
	policies := req.LatencyPolicies
	if len(policies) == 0 && latencyCap > 0 {
		policies = []LatencyPolicy{{MaxPlayerLatencyMs: latencyCap}}
	}
	all, _ := RankRegions(req.PlayerLatencies, 0)
	r := routes{preferred: preferred, ranked: all, fallback: fallback, max: maxRegions, policies: policies, worst: map[string]float64{}}
	for _, region := range all {
		r.worst[region.Region] = region.MaxMs
	}
	plan, cap, _ := r.at(0)
	return selection{plan: plan, cap: cap, routes: r}
}

// regionInputsDigest identifies the new region-selection inputs for
// idempotency; "" when the request uses desiredRegion alone, so records
// written before these fields existed still match their replays.
func regionInputsDigest(req Request, preferred []string, desired string) string {
	onlyDesired := len(preferred) == 0 || (len(preferred) == 1 && preferred[0] == desired && len(req.PreferredRegions) == 0)
	if onlyDesired && len(req.PlayerLatencies) == 0 && req.MaxPlayerLatencyMs == nil && req.QueueTimeoutSeconds == nil && len(req.LatencyPolicies) == 0 {
		return ""
	}
	players := append([]PlayerLatency(nil), req.PlayerLatencies...)
	sort.SliceStable(players, func(i, j int) bool { return players[i].PlayerID < players[j].PlayerID })
	// encoding/json writes map keys sorted, so equal inputs encode equally.
	// q and lp are left out when absent, so digests written before them
	// still match their replays.
	b, _ := json.Marshal(struct {
		P  []string        `json:"p"`
		L  []PlayerLatency `json:"l"`
		M  *float64        `json:"m"`
		Q  *int            `json:"q,omitempty"`
		LP []LatencyPolicy `json:"lp,omitempty"`
	}{preferred, players, req.MaxPlayerLatencyMs, req.QueueTimeoutSeconds, req.LatencyPolicies})
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// ValidLatency reports whether a player's measurement is one a request
// may carry: a region name (a "custom-" prefix is the ranking's to strip)
// and 0 to MaxLatencyMs milliseconds.
func ValidLatency(region string, ms float64) bool {
	r := normalizeRegion(region)
	return r != "" && validRegion(r) && !math.IsNaN(ms) && ms >= 0 && ms <= MaxLatencyMs
}
