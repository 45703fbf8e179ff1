// Package logging sets up JSON slog output and carries a request-scoped
// logger (tagged with the Lambda request id) through contexts.
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/aws/aws-lambda-go/lambdacontext"
	smithylogging "github.com/aws/smithy-go/logging"
)

// New returns a JSON logger writing to w at level.
func New(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

type ctxKey struct{}

// WithLogger stores l in ctx, tagged with the Lambda request id when ctx has one.
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" {
		l = l.With("requestId", lc.AwsRequestID)
	}
	return context.WithValue(ctx, ctxKey{}, l)
}

// FromContext returns the logger stored by WithLogger, or slog's default.
func FromContext(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(ctxKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

// SDKLogger routes the AWS SDK's own log lines (retries, checksum warnings)
// through l, so every line a function writes is JSON.
func SDKLogger(l *slog.Logger) smithylogging.Logger {
	return smithylogging.LoggerFunc(func(c smithylogging.Classification, format string, v ...any) {
		level := slog.LevelDebug
		if c == smithylogging.Warn {
			level = slog.LevelWarn
		}
		l.Log(context.Background(), level, fmt.Sprintf(format, v...), "source", "aws-sdk")
	})
}
