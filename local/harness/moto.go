package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

const motoServerEnv = "MOTO_SERVER"

// StartMoto runs moto_server on a free loopback port and waits until it
// answers a Secrets Manager call. ctx bounds startup only (30 s at most).
func StartMoto(ctx context.Context) (*Process, error) {
	bin, err := findMotoServer()
	if err != nil {
		return nil, err
	}
	return startServer(ctx, serverSpec{
		name: "moto",
		path: bin,
		args: func(port int) []string { return []string{"-H", "127.0.0.1", "-p", strconv.Itoa(port)} },
		probe: func(ctx context.Context, endpoint string) error {
			_, err := NewSecretsManager(AWSConfig(), endpoint).ListSecrets(ctx, &secretsmanager.ListSecretsInput{},
				func(o *secretsmanager.Options) { o.Retryer = aws.NopRetryer{} })
			return err
		},
	})
}

// findMotoServer prefers an explicit $MOTO_SERVER, then PATH, then the pyenv
// shim, which is where `pip install` puts it on machines whose PATH lacks
// the shims directory (e.g. non-login CI shells).
func findMotoServer() (string, error) {
	if bin := os.Getenv(motoServerEnv); bin != "" {
		if !isExecutable(bin) {
			return "", fmt.Errorf("$%s=%s is not an executable file: install moto with `pip install 'moto[server]'` (or run `make deps`)", motoServerEnv, bin)
		}
		return bin, nil
	}
	if bin, err := exec.LookPath("moto_server"); err == nil {
		return bin, nil
	}
	looked := "$" + motoServerEnv + ", PATH"
	if home, err := os.UserHomeDir(); err == nil {
		shim := filepath.Join(home, ".pyenv", "shims", "moto_server")
		if isExecutable(shim) {
			return shim, nil
		}
		looked += ", " + shim
	}
	return "", fmt.Errorf("moto_server not found (looked at %s): install it with `pip install 'moto[server]'` (or run `make deps`)", looked)
}
