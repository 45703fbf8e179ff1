// Command invoke runs one function's bootstrap once with an event file
// through the Lambda Runtime API: a Docker-free `sam local invoke`
// (`make invoke FN=<LogicalId> EVENT=events/<file>.json`). It uses the
// components of a running `make dev`, or starts its own for the call.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/runtimeapi"
	"github.com/gamefabric-alloc/allocsvc/local/stack"
)

func main() {
	fn := flag.String("fn", "", "the function's logical ID in template.yaml, e.g. AllocateFunction")
	eventPath := flag.String("event", "", "the event file, e.g. events/allocate-new.json")
	configPath := flag.String("config", "local/dev.yaml", "stack configuration (when no `make dev` is running)")
	workDir := flag.String("workdir", ".cache/dev", "the `make dev` work dir")
	flag.Parse()
	if *fn == "" || *eventPath == "" {
		fmt.Fprintln(os.Stderr, "usage: make invoke FN=<LogicalId> EVENT=events/<file>.json")
		os.Exit(2)
	}
	if err := run(*fn, *eventPath, *configPath, *workDir); err != nil {
		fmt.Fprintln(os.Stderr, "invoke:", err)
		os.Exit(1)
	}
}

func run(fn, eventPath, configPath, workDir string) error {
	root, err := harness.RepoRoot()
	if err != nil {
		return err
	}
	if !filepath.IsAbs(workDir) {
		workDir = filepath.Join(root, workDir)
	}
	event, err := os.ReadFile(eventPath)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg, err := stack.LoadConfig(filepath.Join(root, configPath))
	if err != nil {
		return err
	}

	var c, own *stack.Components
	var refs map[string]string
	if st, err := stack.ReadLiveState(stack.StateFile(workDir)); err == nil {
		fmt.Fprintf(os.Stderr, "invoke: using the running `make dev` stack (%s)\n", st.APIURL)
		c = st.Components()
		refs = st.Refs
		if c.Template, err = stack.LoadTemplate(root); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(os.Stderr, "invoke: no `make dev` running; starting DynamoDB Local, moto (Secrets Manager, SQS, EventBridge) and the emulated GameFabric Allocators and Ping Service for this call")
		if c, err = stack.StartComponents(ctx, cfg, root); err != nil {
			return err
		}
		defer c.Close()
		refs = c.Refs(cfg, "http://127.0.0.1:3000")
		own = c
	}
	env, err := c.FunctionEnv(fn, refs)
	if err != nil {
		return err
	}
	bins, err := stack.Build(ctx, root, filepath.Join(workDir, "bin"), "functions/"+stack.FunctionDir(fn))
	if err != nil {
		return err
	}
	rt, err := runtimeapi.Start(ctx, bins[stack.FunctionDir(fn)], env, runtimeapi.WithFunctionName(fn), runtimeapi.WithLogOutput(os.Stderr))
	if err != nil {
		return err
	}
	defer rt.Close()
	res, err := rt.Invoke(ctx, event, 30*time.Second)
	if err != nil {
		return err
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, res.Payload, "", "  ") != nil {
		pretty.Write(res.Payload)
	}
	fmt.Fprintf(os.Stderr, "invoke: %s answered in %s (init %s)\n", fn, res.Duration.Round(time.Millisecond), rt.InitDuration().Round(time.Millisecond))
	fmt.Println(pretty.String())
	if own != nil && own.EventsTapURL != "" {
		// No `make dev` prints what the function published: show it here.
		events, err := own.ReadTap(ctx, 500*time.Millisecond)
		for _, e := range events {
			fmt.Fprintln(os.Stderr, stack.EventLine(e))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "invoke: reading the events tap:", err)
		}
	}
	if res.FunctionError != nil {
		return res.FunctionError
	}
	return nil
}
