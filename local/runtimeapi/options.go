package runtimeapi

import "io"

// Option customises Start.
type Option func(*config)

type config struct {
	functionName string
	logOutput    io.Writer
	started      func(pid int) error
	// dir is the binary's directory: the working directory and
	// LAMBDA_TASK_ROOT, as in Lambda where both are /var/task.
	dir string
}

// The sandbox's fixed settings. The memory size is informational only:
// nothing limits the process's memory.
const (
	defaultFunctionName = "local-function"
	memoryMB            = 128
	region              = "us-east-1"
)

func defaultConfig() config {
	return config{functionName: defaultFunctionName}
}

// WithFunctionName sets AWS_LAMBDA_FUNCTION_NAME and the invoked ARN.
func WithFunctionName(name string) Option { return func(c *config) { c.functionName = name } }

// WithLogOutput also copies the function's output to w as it is produced
// (e.g. a writer that calls t.Log), in addition to Logs.
func WithLogOutput(w io.Writer) Option { return func(c *config) { c.logOutput = w } }

// WithStarted calls started with the bootstrap's process id as soon as it
// runs, before the Runtime API answers its first request (e.g. to confine
// it to a cgroup, as Lambda confines a sandbox to its CPU share). An error
// stops the process and fails Start.
func WithStarted(started func(pid int) error) Option { return func(c *config) { c.started = started } }
