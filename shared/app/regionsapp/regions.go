// Package regionsapp is RegionsFunction's composition root.
package regionsapp

import (
	"log/slog"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/gamefabric-alloc/allocsvc/shared/app/healthapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi/regionsapi"
	"github.com/gamefabric-alloc/allocsvc/shared/store/pingtable"
)

// Handler is RegionsFunction: GET /v1/regions from the ping cache, with
// region health when it is on.
func Handler(cfg config.Regions, db *dynamodb.Client, log *slog.Logger) http.Handler {
	var health regionsapi.HealthLister // nil: health is left out of the answer
	if _, b := healthapp.RegionHealth(db, cfg.RegionHealth); b != nil {
		health = b
	}
	return regionsapi.NewHandler(pingtable.New(db, cfg.Table), health, cfg.Period, log)
}
