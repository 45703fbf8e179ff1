// Package sweepapp is HealthSweepFunction's composition root.
package sweepapp

import (
	"context"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gamefabric-alloc/allocsvc/shared/app"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/lifecycle"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

// Handler is HealthSweepFunction: one sweep per scheduled event.
func Handler(cfg config.Lifecycle, db *dynamodb.Client, log *slog.Logger) func(context.Context, events.EventBridgeEvent) (lifecycle.SweepSummary, error) {
	svc := app.Lifecycle(cfg, db)
	return func(ctx context.Context, _ events.EventBridgeEvent) (lifecycle.SweepSummary, error) {
		return svc.Sweep(logging.WithLogger(ctx, log))
	}
}
