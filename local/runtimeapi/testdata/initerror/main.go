// Command initerror is a minimal custom runtime (standard library only)
// that reports an init failure the way non-Go runtimes do, via
// /runtime/init/error, and then hangs instead of exiting so the harness
// must notice the posted error rather than the exit.
package main

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	url := "http://" + os.Getenv("AWS_LAMBDA_RUNTIME_API") + "/2018-06-01/runtime/init/error"
	body := `{"errorType":"Runtime.ConfigError","errorMessage":"TABLE_NAME is not set"}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	req.Header.Set("Lambda-Runtime-Function-Error-Type", "Runtime.ConfigError")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	resp.Body.Close()
	fmt.Println("init error posted, status", resp.StatusCode)
	time.Sleep(time.Minute)
}
