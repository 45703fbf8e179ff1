package runtimeapi

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"
)

// region is the sandbox's; Lambda's memory size is informational only:
// nothing limits the process's memory.
const region = "us-east-1"

// lambdaEnv is the environment of a provided.al2023 function. The host
// environment is deliberately not inherited (only PATH, so wrapper scripts
// still work): a function must not pass locally because of a variable that
// Lambda will never set, such as a developer's AWS_PROFILE.
func lambdaEnv(cfg config, apiAddr string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"LANG=en_US.UTF-8",
		"TZ=:UTC",
		"_HANDLER=bootstrap",
		"AWS_LAMBDA_RUNTIME_API=" + apiAddr,
		"AWS_LAMBDA_FUNCTION_NAME=" + cfg.functionName,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=128",
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_INITIALIZATION_TYPE=on-demand",
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/" + cfg.functionName,
		"AWS_LAMBDA_LOG_STREAM_NAME=" + logStreamName(),
		"AWS_REGION=" + region,
		"AWS_DEFAULT_REGION=" + region,
		"LAMBDA_TASK_ROOT=" + cfg.dir,
		"LAMBDA_RUNTIME_DIR=" + cfg.dir,
	}
}

func functionARN(cfg config) string {
	// 123456789012 is the placeholder account used by SAM and moto alike.
	return fmt.Sprintf("arn:aws:lambda:%s:123456789012:function:%s", region, cfg.functionName)
}

func logStreamName() string {
	return time.Now().UTC().Format("2006/01/02") + "/[$LATEST]" + randomHex(16)
}

// newTraceID returns an X-Ray trace header in Lambda's format, so code that
// parses _X_AMZN_TRACE_ID behaves as in production.
func newTraceID() string {
	return fmt.Sprintf("Root=1-%08x-%s;Parent=%s;Sampled=0", time.Now().Unix(), randomHex(12), randomHex(8))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
