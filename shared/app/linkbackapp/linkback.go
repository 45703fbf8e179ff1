// Package linkbackapp is LinkBackFunction's composition root.
package linkbackapp

import (
	"log/slog"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gamefabric-alloc/allocsvc/shared/app"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/httpapi"
)

// Handler is LinkBackFunction: the game server's link, heartbeat and end.
func Handler(cfg config.Lifecycle, db *dynamodb.Client, log *slog.Logger) http.Handler {
	return httpapi.NewLinkBackHandler(app.Lifecycle(cfg, db), cfg.HeartbeatInterval, log)
}
