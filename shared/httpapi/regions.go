package httpapi

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

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/pingcache"
)

// PingEntries is what the regions route needs from the ping cache.
type PingEntries interface {
	List(ctx context.Context) ([]pingcache.Entry, error)
}

// RegionsRoutes serves GET /v1/regions from the ping cache. Responses may be
// cached for half the refresh period: a client is then at most 1.5 periods
// behind GameFabric.
func RegionsRoutes(cache PingEntries, period time.Duration, now func() time.Time) map[string]http.HandlerFunc {
	h := regionsHandler{cache: cache, maxAge: max(int((period / 2).Seconds()), 1), now: now}
	return map[string]http.HandlerFunc{"GET /v1/regions": h.list}
}

// NewRegionsHandler serves the regions function's routes.
func NewRegionsHandler(cache PingEntries, period time.Duration, log *slog.Logger) http.Handler {
	return NewHandler(RegionsRoutes(cache, period, time.Now), log)
}

type regionsHandler struct {
	cache  PingEntries
	maxAge int
	now    func() time.Time
}

type regionsView struct {
	Regions []regionView `json:"regions"`
}

type regionView struct {
	Region      string                  `json:"region"`
	Zone        string                  `json:"zone"`
	PingTargets []gamefabric.PingTarget `json:"pingTargets"`
	RefreshedAt string                  `json:"refreshedAt"`
}

func (h regionsHandler) list(w http.ResponseWriter, r *http.Request) {
	entries, err := h.cache.List(r.Context())
	if err != nil {
		writeError(w, r, &allocation.Error{Code: allocation.CodeInternal, Err: fmt.Errorf("list ping cache: %w", err)})
		return
	}
	view := regionsView{Regions: []regionView{}}
	for _, e := range pingcache.Live(entries, h.now()) {
		view.Regions = append(view.Regions, regionView{Region: e.Region, Zone: e.Zone, PingTargets: e.Targets, RefreshedAt: formatTime(e.RefreshedAt)})
	}
	body, err := json.Marshal(view)
	if err != nil {
		writeError(w, r, &allocation.Error{Code: allocation.CodeInternal, Err: err})
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
