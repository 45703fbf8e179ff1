package allocation

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
	"github.com/gamefabric-alloc/allocsvc/shared/region"
)

func validRegion(r string) bool {
	return r == "" || region.Valid(r)
}

type selection struct {
	plan    []PlanStep
	relaxed bool
	digest  string
}

// selectRegions validates the region-selection fields and builds the plan.
func (d Defaults) selectRegions(req Request, desired string) (selection, []string) {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	preferred := make([]string, 0, len(req.PreferredRegions))
	for _, r := range req.PreferredRegions {
		r = normalizeRegion(r)
		if r == "" || !validRegion(r) {
			add("preferredRegions entries must be region names: %s", region.Rule)
			break
		}
		preferred = append(preferred, r)
	}
	switch {
	case len(req.PreferredRegions) > maxPreferredRegions:
		add("preferredRegions may list at most %d regions", maxPreferredRegions)
	case desired != "" && len(preferred) > 0 && !(len(preferred) == 1 && preferred[0] == desired):
		add("give desiredRegion or preferredRegions, not both")
	case desired != "" && len(preferred) == 0:
		preferred = []string{desired}
	}

	if len(req.PlayerLatencies) > maxPlayers {
		add("playerLatencies may list at most %d players", maxPlayers)
	}
	for i, p := range req.PlayerLatencies {
		if len(p.LatencyMs) == 0 || len(p.LatencyMs) > maxLatencyRegions {
			add("playerLatencies[%d].latencyMs must list 1-%d regions", i, maxLatencyRegions)
			break
		}
		bad := false
		for region, ms := range p.LatencyMs {
			if r := normalizeRegion(region); r == "" || !validRegion(r) || math.IsNaN(ms) || ms < 0 || ms > maxLatencyMs {
				bad = true
			}
		}
		if bad {
			add("playerLatencies[%d].latencyMs must map region names to 0-%d ms", i, maxLatencyMs)
			break
		}
	}
	latencyCap := d.MaxPlayerLatencyMs
	if m := req.MaxPlayerLatencyMs; m != nil {
		if *m <= 0 || *m > maxLatencyMs {
			add("maxPlayerLatencyMs must be more than 0 and at most %d", maxLatencyMs)
		}
		latencyCap = *m
	}
	if len(problems) > 0 {
		return selection{}, problems
	}

	ranked, relaxed := RankRegions(req.PlayerLatencies, latencyCap)
	maxRegions := d.MaxAttempts
	if maxRegions <= 0 {
		maxRegions = defaults.MaxAllocationAttempts
	}
	sel := selection{plan: BuildPlan(preferred, ranked, d.Region, maxRegions), relaxed: relaxed && len(preferred) == 0}
	if len(sel.plan) == 0 {
		return selection{}, []string{"desiredRegion, preferredRegions or playerLatencies is required because FALLBACK_REGION is not configured"}
	}
	sel.digest = regionInputsDigest(req, preferred, desired)
	return sel, nil
}

// regionInputsDigest identifies the new region-selection inputs for
// idempotency; "" when the request uses desiredRegion alone, so records
// written before these fields existed still match their replays.
func regionInputsDigest(req Request, preferred []string, desired string) string {
	onlyDesired := len(preferred) == 0 || (len(preferred) == 1 && preferred[0] == desired && len(req.PreferredRegions) == 0)
	if onlyDesired && len(req.PlayerLatencies) == 0 && req.MaxPlayerLatencyMs == nil {
		return ""
	}
	players := append([]PlayerLatency(nil), req.PlayerLatencies...)
	sort.SliceStable(players, func(i, j int) bool { return players[i].PlayerID < players[j].PlayerID })
	// encoding/json writes map keys sorted, so equal inputs encode equally.
	b, _ := json.Marshal(struct {
		P []string        `json:"p"`
		L []PlayerLatency `json:"l"`
		M *float64        `json:"m"`
	}{preferred, players, req.MaxPlayerLatencyMs})
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
