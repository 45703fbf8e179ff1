package stack

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/gamefabric-alloc/allocsvc/local/gateway"
	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
)

// serveFunctions starts a sandbox pool per function, with its environment
// from the template, and serves the HTTP API's routes and the function
// URLs, each on its own loopback port. The ports are taken first: the
// functions' environments name them (BACKEND_ADDRESS).
func (s *Stack) serveFunctions(cfg Config, o Options, fns []string, bins map[string]string) (err error) {
	api, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.API.Port)))
	if err != nil {
		return fmt.Errorf("local HTTP API: %w", err)
	}
	s.APIURL = "http://" + api.Addr().String()
	s.Refs = s.Components.Refs(cfg, s.APIURL)
	urls, err := s.listenFunctionURLs(cfg)
	lns := append([]net.Listener{api}, urls...)
	defer func() {
		if err != nil {
			closeAll(lns) // those served are closed twice, harmlessly
		}
	}()
	if err != nil {
		return err
	}
	invokers := map[string]gateway.Invoker{}
	for _, fn := range fns {
		env, err := s.FunctionEnv(fn, s.Refs)
		if err != nil {
			return err
		}
		if fn == allocateFunction {
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
	if o.WrapAPI != nil {
		handler = o.WrapAPI(handler)
	}
	s.serve(api, handler)
	return s.serveFunctionURLs(urls, o.WrapAPI)
}

// allocateFunction hands game servers their pragmaBackendAddress.
const allocateFunction = "AllocateFunction"

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

// serve serves h on ln until Close.
func (s *Stack) serve(ln net.Listener, h http.Handler) {
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	s.closers = append(s.closers, srv.Close)
}
