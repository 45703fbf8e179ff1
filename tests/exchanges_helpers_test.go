//go:build integration

package tests

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// exchange is one request a stack's listener answered.
type exchange struct {
	host, method, path string
	status             int
}

// exchanges records what a stack's HTTP API and function URLs answered:
// the Host a request came to tells which of them it reached.
type exchanges struct {
	mu  sync.Mutex
	all []exchange
}

func (e *exchanges) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		e.mu.Lock()
		e.all = append(e.all, exchange{host: r.Host, method: r.Method, path: r.URL.Path, status: sw.status})
		e.mu.Unlock()
	})
}

// answered counts the exchanges that reached base's listener with a path
// ending in suffix and were answered status.
func (e *exchanges) answered(base, suffix string, status int) int {
	return e.count(base, func(x exchange) bool { return strings.HasSuffix(x.path, suffix) && x.status == status })
}

// reached counts every exchange that reached base's listener with a path
// starting with prefix, whatever its answer.
func (e *exchanges) reached(base, prefix string) int {
	return e.count(base, func(x exchange) bool { return strings.HasPrefix(x.path, prefix) })
}

func (e *exchanges) count(base string, match func(exchange) bool) int {
	u, err := url.Parse(base)
	if err != nil {
		return -1
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, x := range e.all {
		if x.host == u.Host && match(x) {
			n++
		}
	}
	return n
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(status int) {
	if !w.wrote {
		w.status, w.wrote = status, true
	}
	w.ResponseWriter.WriteHeader(status)
}
