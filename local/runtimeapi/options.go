package runtimeapi

import "io"

// Option customises Start.
type Option func(*config)

type config struct {
	functionName string
	memoryMB     int
	region       string
	dir          string
	logOutput    io.Writer
}

func defaultConfig() config {
	return config{
		functionName: "local-function",
		memoryMB:     128,
		region:       "us-east-1",
	}
}

// WithFunctionName sets AWS_LAMBDA_FUNCTION_NAME and the invoked ARN.
func WithFunctionName(name string) Option { return func(c *config) { c.functionName = name } }

// WithMemoryMB sets AWS_LAMBDA_FUNCTION_MEMORY_SIZE. It is informational
// only: nothing limits the process's memory.
func WithMemoryMB(mb int) Option { return func(c *config) { c.memoryMB = mb } }

// WithRegion sets AWS_REGION, AWS_DEFAULT_REGION and the ARN's region.
func WithRegion(region string) Option { return func(c *config) { c.region = region } }

// WithDir sets the working directory and LAMBDA_TASK_ROOT; by default the
// binary's directory, as in Lambda where both are /var/task.
func WithDir(dir string) Option { return func(c *config) { c.dir = dir } }

// WithLogOutput also copies the function's output to w as it is produced
// (e.g. a writer that calls t.Log), in addition to Logs.
func WithLogOutput(w io.Writer) Option { return func(c *config) { c.logOutput = w } }
