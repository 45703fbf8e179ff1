package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// NewHandler serves routes (pattern → handler) on one mux. Unknown paths get
// a JSON 404 and known paths with another method a JSON 405.
func NewHandler(routes map[string]http.HandlerFunc, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	allowed := map[string][]string{}
	for pattern, h := range routes {
		mux.HandleFunc(pattern, h)
		var method, path string
		if _, err := fmt.Sscanf(pattern, "%s %s", &method, &path); err == nil {
			allowed[path] = append(allowed[path], method)
		}
	}
	for path, methods := range allowed {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			for _, m := range methods {
				w.Header().Add("Allow", m)
			}
			WriteError(w, r, &gameinstance.Error{Code: codeMethodNotAllowed, Message: fmt.Sprintf("%s is not allowed on %s", r.Method, path)})
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, &gameinstance.Error{Code: gameinstance.CodeNotFound, Message: fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path)})
	})
	return withLogging(mux, log)
}
