package dashboard

import (
	"mime"
	"net"
	"net/http"
	"strings"
)

// guard says why r is refused, "" when it may be served. The dashboard
// listens on loopback, but a browser will still carry requests there for
// other pages: a Host that is not loopback is DNS rebinding (a name that
// resolves to 127.0.0.1), and a write must be same-origin JSON, which no
// other page can send without the browser asking first.
func guard(r *http.Request, crossOrigin *http.CrossOriginProtection) string {
	if !loopbackHost(r.Host) {
		return "the dashboard answers only to a loopback Host (127.0.0.1, [::1], localhost)"
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return ""
	}
	if err := crossOrigin.Check(r); err != nil {
		return "cross-origin request refused"
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return "the body must be application/json"
	}
	return ""
}

// loopbackHost reports whether a Host header names this machine's loopback.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
