package stack

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/gamefabric-alloc/allocsvc/local/gateway"
	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
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
	// URL is its base URL as Lambda gives it (!GetAtt <LogicalID>.FunctionUrl),
	// with a trailing slash: http://127.0.0.1:<port>/.
	URL string
}

// serveFunctions starts a sandbox pool per function, with its environment
// from the template, and serves the HTTP API's routes and the function
// URLs, each on its own loopback port. The ports are taken first: the
// functions' environments name them (BACKEND_ADDRESS).
func (s *Stack) serveFunctions(cfg Config, o Options, fns []string, bins map[string]string) (err error) {
	api, err := listen(cfg.API.Port)
	if err != nil {
		return fmt.Errorf("local HTTP API: %w", err)
	}
	lns := []net.Listener{api}
	defer func() {
		for _, ln := range lns {
			if err != nil {
				_ = ln.Close() // those served are closed twice, harmlessly
			}
		}
	}()
	s.APIURL = "http://" + api.Addr().String()
	s.Refs = s.Components.Refs(cfg, s.APIURL)
	urls, err := s.Template.FunctionURLs(s.Refs)
	if err != nil {
		return err
	}
	for i, u := range urls {
		ln, err := listen(urlPort(cfg.FunctionURLs.Port, i))
		if err != nil {
			return fmt.Errorf("function URL %s: %w", u.LogicalID, err)
		}
		lns = append(lns, ln)
		s.FunctionURLs = append(s.FunctionURLs, FunctionURL{FunctionURL: u, URL: "http://" + ln.Addr().String() + "/"})
		s.Refs[u.LogicalID+".FunctionUrl"] = s.FunctionURLs[i].URL
	}
	invokers := map[string]gateway.Invoker{}
	for _, fn := range fns {
		env, err := s.FunctionEnv(fn, s.Refs)
		if err != nil {
			return err
		}
		if fn == "AllocateFunction" { // it hands game servers their pragmaBackendAddress
			s.GameServerURL = gameServerURL(env)
		}
		invokers[fn] = s.startPool(cfg, o, fn, bins[FunctionDir(fn)], env)
	}
	if s.Routes, err = s.Template.HTTPRoutes(s.Refs); err != nil {
		return err
	}
	handler, err := gateway.New(s.Routes, invokers, gateway.Timeouts{Function: cfg.API.Timeout}, s.log)
	if err != nil {
		return err
	}
	s.closers = append(s.closers, serveOn(api, o.WrapAPI(handler)))
	return s.serveFunctionURLs(lns[1:], o.WrapAPI)
}

// startPool makes fn's pool of up to api.concurrency sandboxes, started
// as invocations need them.
func (s *Stack) startPool(cfg Config, o Options, fn, bin string, env []string) *gateway.Pool {
	opts := []runtimeapi.Option{runtimeapi.WithFunctionName(fn), runtimeapi.WithLogOutput(prefixed(o.Log, fn))}
	if o.SandboxStarted != nil {
		opts = append(opts, runtimeapi.WithStarted(func(pid int) error { return o.SandboxStarted(fn, pid) }))
	}
	pool := gateway.NewPool(fn, cfg.API.Concurrency, func(ctx context.Context) (*runtimeapi.Runtime, error) {
		return runtimeapi.Start(ctx, bin, env, opts...)
	})
	s.pools[fn] = pool
	s.closers = append(s.closers, pool.Close)
	return pool
}

// serveFunctionURLs serves each function URL on its listener through its
// function's sandboxes, with the function's Timeout and reserved
// concurrency from the template.
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
		h := gateway.NewFunctionURL(gateway.FunctionURL{Function: u.FunctionLogicalID, ID: gateway.URLID(u.LogicalID),
			Region: harness.Region, Timeout: timeout, Reserved: reserved}, pool, s.log)
		s.closers = append(s.closers, serveOn(lns[i], wrap(h)))
	}
	return nil
}

// functionURLRefs gives each function URL the template creates with refs
// the address of port (its first; 0 leaves the port to Start).
func (c *Components) functionURLRefs(port int, refs map[string]string) {
	if c.Template == nil {
		return
	}
	urls, _ := c.Template.FunctionURLs(refs) // Start reports an error; a function needing the URL fails to resolve it
	for i, u := range urls {
		refs[u.LogicalID+".FunctionUrl"] = "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(urlPort(port, i))) + "/"
	}
}

// urlPort is the i-th function URL's port when the first has first.
func urlPort(first, i int) int {
	if first <= 0 {
		return 0
	}
	return first + i
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
