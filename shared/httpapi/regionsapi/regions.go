// Package regionsapi serves GET /v1/regions (RegionsFunction) from the
// ping cache and region health.
package regionsapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/apishape"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/pingcache"
	"github.com/gamefabric-alloc/allocsvc/shared/regionhealth"
)

// PingEntries is what the regions route needs from the ping cache.
type PingEntries interface {
	List(ctx context.Context) ([]pingcache.Entry, error)
}

// Routes serves GET /v1/regions from the ping cache. Responses may be
// cached for half the refresh period: a client is then at most 1.5 periods
// behind GameFabric.
func Routes(cache PingEntries, health HealthLister, period time.Duration, now func() time.Time) map[string]http.HandlerFunc {
	h := regionsHandler{cache: cache, health: health, maxAge: max(int((period / 2).Seconds()), 1), now: now}
	return map[string]http.HandlerFunc{"GET /v1/regions": h.list}
}

// NewHandler serves the regions function's routes.
func NewHandler(cache PingEntries, health HealthLister, period time.Duration, log *slog.Logger) http.Handler {
	return httpapi.NewHandler(Routes(cache, health, period, time.Now), log)
}

// HealthLister lists region health; nil leaves health out of the answer.
type HealthLister interface {
	List(ctx context.Context) ([]regionhealth.Health, error)
}

type regionsHandler struct {
	cache  PingEntries
	health HealthLister
	maxAge int
	now    func() time.Time
}

func (h regionsHandler) list(w http.ResponseWriter, r *http.Request) {
	entries, err := h.cache.List(r.Context())
	if err != nil {
		// A DynamoDB blip, not a defect: the client may retry shortly.
		httpapi.WriteError(w, r, &gameinstance.Error{Code: gameinstance.CodeUnavailable, RetryAfter: time.Second,
			Message: "the ping cache is unavailable; retry shortly", Err: fmt.Errorf("list ping cache: %w", err)})
		return
	}
	health := map[string]regionhealth.Health{}
	if h.health != nil {
		// Health is advisory: without it, clients still get their ping targets.
		list, err := h.health.List(r.Context())
		if err != nil {
			logging.FromContext(r.Context()).Warn("listing region health failed; answering without it", "error", err)
		}
		for _, rh := range list {
			health[rh.Region] = rh
		}
	}
	view := apishape.Regions{Regions: []apishape.Region{}}
	for _, e := range pingcache.Live(entries, h.now()) {
		v := apishape.Region{Region: e.Region, Zone: e.Zone, PingTargets: make([]apishape.PingTarget, len(e.Targets)),
			RefreshedAt: e.RefreshedAt.UTC()}
		for i, t := range e.Targets {
			v.PingTargets[i] = apishape.PingTarget(t)
		}
		if h.health != nil {
			v.Health = string(regionhealth.RegionInitialized)
			if rh, ok := health[e.Region]; ok && rh.State != "" {
				v.Health, v.HealthSince = string(rh.State), rh.Since.UTC()
			}
		}
		view.Regions = append(view.Regions, v)
	}
	body, err := json.Marshal(view)
	if err != nil {
		httpapi.WriteError(w, r, &gameinstance.Error{Code: gameinstance.CodeInternal, Err: err})
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", fmt.Sprintf("private, max-age=%d", h.maxAge))
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(body, '\n'))
}

// etagMatches implements If-None-Match's weak comparison over a list.
func etagMatches(header, etag string) bool {
	for _, candidate := range strings.Split(header, ",") {
		candidate = strings.TrimPrefix(strings.TrimSpace(candidate), "W/")
		if candidate == "*" || candidate == etag {
			return true
		}
	}
	return false
}
