package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
)

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// withLogging attaches the request-scoped logger, logs each request once,
// and turns a panic into a JSON 500 instead of a dropped connection.
func withLogging(next http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		r = r.WithContext(logging.WithLogger(r.Context(), log))
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			if p := recover(); p != nil {
				WriteError(rec, r, &gameinstance.Error{Code: gameinstance.CodeInternal, Err: fmt.Errorf("panic: %v", p)})
			}
			logging.FromContext(r.Context()).Info("request", "method", r.Method, "path", r.URL.Path,
				"status", rec.status, "durationMs", time.Since(start).Milliseconds())
		}()
		next.ServeHTTP(rec, r)
	})
}
