package stack

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/gamefabric-alloc/allocsvc/local/gateway"
	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/template"
	"github.com/gamefabric-alloc/allocsvc/shared/defaults"
)

// GameServerEndpoint is the template parameter that says where game
// servers link, heartbeat and end: LinkBackFunction's function URL (the
// template's default) or the HTTP API's routes.
const (
	GameServerEndpoint    = "GameServerEndpoint"
	GameServerFunctionURL = defaults.GameServerEndpointFunctionURL
	GameServerHTTPAPI     = defaults.GameServerEndpointHTTPAPI
)

// FunctionURL is a function URL the stack serves.
type FunctionURL struct {
	template.FunctionURL
	// URL is its base URL as Lambda gives it (!GetAtt <LogicalID>.FunctionUrl):
	// with a trailing slash, http://127.0.0.1:<port>/.
	URL string
}

// functionURLRefs gives each function URL the template creates with refs
// the address of port (its first; 0 leaves the port to Start).
func (c *Components) functionURLRefs(port int, refs map[string]string) {
	if c.Template == nil {
		return
	}
	urls, err := c.Template.FunctionURLs(refs)
	if err != nil {
		return // Start reports it; a function that needs the URL fails to resolve it
	}
	for i, u := range urls {
		refs[u.LogicalID+".FunctionUrl"] = functionURLAt(net.JoinHostPort("127.0.0.1", strconv.Itoa(urlPort(port, i))))
	}
}

// functionURLAt is a function URL's base URL at addr, with the trailing
// slash Lambda's has.
func functionURLAt(addr string) string { return "http://" + addr + "/" }

// urlPort is the i-th function URL's port when the first has first.
func urlPort(first, i int) int {
	if first <= 0 {
		return 0
	}
	return first + i
}

// listenFunctionURLs opens a loopback port for each function URL the
// template creates with s.Refs (functionUrls.port, the next one the next
// port, 0 any free port) and points its FunctionUrl reference at it, so
// the functions' environments name the URL as it really listens.
func (s *Stack) listenFunctionURLs(cfg Config) ([]net.Listener, error) {
	urls, err := s.Template.FunctionURLs(s.Refs)
	if err != nil {
		return nil, err
	}
	var lns []net.Listener
	for i, u := range urls {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(urlPort(cfg.FunctionURLs.Port, i))))
		if err != nil {
			closeAll(lns)
			return nil, fmt.Errorf("function URL %s: %w", u.LogicalID, err)
		}
		lns = append(lns, ln)
		f := FunctionURL{FunctionURL: u, URL: functionURLAt(ln.Addr().String())}
		s.FunctionURLs = append(s.FunctionURLs, f)
		s.Refs[u.LogicalID+".FunctionUrl"] = f.URL
	}
	return lns, nil
}

// serveFunctionURLs serves each function URL on its listener through its
// function's sandboxes, with the function's Timeout and reserved
// concurrency from the template; wrap (Options.WrapAPI) wraps each.
func (s *Stack) serveFunctionURLs(lns []net.Listener, wrap func(http.Handler) http.Handler) error {
	for i, u := range s.FunctionURLs {
		pool, ok := s.pools[u.FunctionLogicalID]
		if !ok {
			return fmt.Errorf("function URL %s: no function %s", u.LogicalID, u.FunctionLogicalID)
		}
		timeout, err := s.Template.FunctionTimeout(u.FunctionLogicalID)
		if err != nil {
			return err
		}
		reserved, err := s.Template.FunctionReservedConcurrency(u.FunctionLogicalID, s.Refs)
		if err != nil {
			return err
		}
		var h http.Handler = gateway.NewFunctionURL(gateway.FunctionURL{Function: u.FunctionLogicalID, ID: gateway.URLID(u.LogicalID),
			Region: harness.Region, Timeout: timeout, Reserved: reserved}, pool, s.log)
		if wrap != nil {
			h = wrap(h)
		}
		s.serve(lns[i], h)
	}
	return nil
}

// gameServerURL is where game servers link back: BACKEND_ADDRESS as the
// allocating function gets it (pragmaBackendAddress), without the trailing
// slash a function URL has, so that paths can be appended as to APIURL.
func gameServerURL(allocateEnv []string) string {
	for _, kv := range allocateEnv {
		if v, ok := strings.CutPrefix(kv, "BACKEND_ADDRESS="); ok {
			return strings.TrimSuffix(v, "/")
		}
	}
	return ""
}

func closeAll(lns []net.Listener) {
	for _, ln := range lns {
		_ = ln.Close()
	}
}
