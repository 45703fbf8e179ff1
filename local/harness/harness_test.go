package harness

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestJarDirLayouts(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"dynamodb_local_2024-01-01", "dynamodb_local_2026-05-28", "dynamodb_local_2099-01-01"} {
		dir := filepath.Join(root, "package", "lib", d)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		// The newest-named directory has no jar, so it must be passed over.
		if d != "dynamodb_local_2099-01-01" {
			writeFile(t, filepath.Join(dir, dynamoDBLocalJar))
		}
	}
	want := filepath.Join(root, "package", "lib", "dynamodb_local_2026-05-28")

	for name, base := range map[string]string{
		"npm root":    root,
		"package dir": filepath.Join(root, "package"),
		"jar dir":     want,
	} {
		got, err := jarDir(base)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != want {
			t.Fatalf("%s: jarDir = %s, want %s", name, got, want)
		}
	}
}

func TestFindDynamoDBLocalDirMissingSaysWhatToDo(t *testing.T) {
	empty := t.TempDir()
	t.Setenv(dynamoDBLocalDirEnv, empty)
	_, err := findDynamoDBLocalDir()
	if err == nil {
		t.Fatal("expected an error for a directory without the jar")
	}
	for _, want := range []string{empty, dynamoDBLocalJar, "make deps", dynamoDBLocalDirEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestFindMotoServerHonoursEnv(t *testing.T) {
	t.Setenv(motoServerEnv, filepath.Join(t.TempDir(), "nope"))
	_, err := findMotoServer()
	if err == nil || !strings.Contains(err.Error(), "pip install 'moto[server]'") {
		t.Fatalf("want an install hint, got %v", err)
	}

	fake := filepath.Join(t.TempDir(), "moto_server")
	writeFile(t, fake)
	if err := os.Chmod(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(motoServerEnv, fake)
	got, err := findMotoServer()
	if err != nil || got != fake {
		t.Fatalf("findMotoServer = %q, %v; want %q", got, err, fake)
	}
}

func TestRepoRootHasGoMod(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if !isFile(filepath.Join(root, "go.mod")) || !isFile(filepath.Join(root, "local", "harness", "harness.go")) {
		t.Fatalf("RepoRoot = %s does not look like the module root", root)
	}
}

func TestStartServerReportsEarlyExitWithOutput(t *testing.T) {
	_, err := startServer(context.Background(), serverSpec{
		name:  "fake",
		path:  "/bin/sh",
		args:  func(int) []string { return []string{"-c", "echo missing-class-foo >&2; exit 3"} },
		probe: func(context.Context, string) error { return errNotReady },
	})
	if err == nil {
		t.Fatal("expected an error")
	}
	for _, want := range []string{"fake exited during startup", "exit status 3", "missing-class-foo"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestStartServerTimesOutAndStops(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := startServer(ctx, serverSpec{
		name:  "sleepy",
		path:  "/bin/sh",
		args:  func(int) []string { return []string{"-c", "echo still-booting; exec sleep 60"} },
		probe: func(context.Context, string) error { return errNotReady },
	})
	if err == nil {
		t.Fatal("expected a timeout")
	}
	if !strings.Contains(err.Error(), "still-booting") || !strings.Contains(err.Error(), "not ready") {
		t.Fatalf("error %q lacks the output tail or reason", err)
	}
	// The sleep ignores nothing, so Stop's SIGTERM must end it well within grace.
	if took := time.Since(began); took > 2*time.Second {
		t.Fatalf("startup failure took %v; the child was probably not stopped promptly", took)
	}
}

func TestAWSConfigIsLocalOnly(t *testing.T) {
	cfg := AWSConfig()
	if cfg.Region != Region {
		t.Fatalf("region %q", cfg.Region)
	}
	creds, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil || creds.AccessKeyID == "" || creds.SecretAccessKey == "" {
		t.Fatalf("credentials %+v, %v", creds, err)
	}
	if got := *NewDynamoDB(cfg, "http://127.0.0.1:1").Options().BaseEndpoint; got != "http://127.0.0.1:1" {
		t.Fatalf("dynamodb BaseEndpoint %q", got)
	}
	if got := *NewSecretsManager(cfg, "http://127.0.0.1:2").Options().BaseEndpoint; got != "http://127.0.0.1:2" {
		t.Fatalf("secretsmanager BaseEndpoint %q", got)
	}
}

var errNotReady = errors.New("not ready yet")

func writeFile(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}
