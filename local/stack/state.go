package stack

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
)

// State is what `make dev` leaves in its work dir so that `make invoke` can
// run a function against the same components.
type State struct {
	APIURL string `json:"apiUrl"`
	// GameServerURL is where game servers link back (Stack.GameServerURL).
	GameServerURL  string            `json:"gameServerUrl,omitempty"`
	DynamoDB       string            `json:"dynamoDbEndpoint"`
	SecretsManager string            `json:"secretsManagerEndpoint"`
	GameFabric     []string          `json:"gamefabricUrls"` // every Allocator's, then the Ping Service's
	Refs           map[string]string `json:"refs"`
	PID            int               `json:"pid"`
	// Moto serves Secrets Manager, SQS and EventBridge.
	Moto       string            `json:"motoEndpoint"`
	Queues     map[string]string `json:"queueUrls"`    // logical ID → URL (EventsDLQ, ...)
	EventBuses map[string]string `json:"eventBuses"`   // logical ID → name
	Streams    map[string]string `json:"streamArns"`   // table logical ID → stream ARN
	EventsTap  string            `json:"eventsTapUrl"` // every published event, for people and tests
	// GameLift is the GameLift stand-in (DescribeMatchmaking).
	GameLift string `json:"gameLiftEndpoint,omitempty"`
	// Dashboard is make dev's dashboard, whose API make match calls.
	Dashboard string `json:"dashboardUrl,omitempty"`
	// GameLiftAPI is GameLift's placement API and its key pair, which
	// make gamelift-place uses.
	GameLiftAPI *GameLiftAPI `json:"gameLiftApi,omitempty"`
}

// StateFile is where the state lives under a work dir.
func StateFile(workDir string) string { return filepath.Join(workDir, "stack.json") }

// StateFileOf is make dev's state file for the tools that find a running
// stack (make play, make match): a relative work dir is under the
// repository, as make dev resolves it.
func StateFileOf(workDir string) string {
	if !filepath.IsAbs(workDir) {
		if root, err := harness.RepoRoot(); err == nil {
			workDir = filepath.Join(root, workDir)
		}
	}
	return StateFile(workDir)
}

// State describes the running stack.
func (s *Stack) State() State {
	var gf []string
	for _, a := range s.Allocators {
		gf = append(gf, a.URL)
	}
	return State{APIURL: s.APIURL, GameServerURL: s.GameServerURL, DynamoDB: s.DynamoDB, SecretsManager: s.SecretsManager,
		GameFabric: append(gf, s.Ping.URL), Refs: s.Refs, PID: os.Getpid(),
		Moto: s.Moto, Queues: s.Queues, EventBuses: s.EventBuses, Streams: s.Streams, EventsTap: s.EventsTapURL, GameLift: s.GameLiftURL,
		GameLiftAPI: s.GameLiftAPI()}
}

// Components are enough of the state's components to run a function
// against them (no GameFabric handles, no Template).
func (st State) Components() *Components {
	return &Components{DynamoDB: st.DynamoDB, SecretsManager: st.SecretsManager, Moto: st.Moto,
		Queues: st.Queues, EventBuses: st.EventBuses, Streams: st.Streams, EventsTapURL: st.EventsTap, GameLiftURL: st.GameLift}
}

// WriteState saves st to path.
func WriteState(path string, st State) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// RunningDev is ReadLiveState for the commands that talk to a running
// make dev (make play, make match): its errors tell the user what to do.
func RunningDev(path string) (State, error) {
	st, err := ReadLiveState(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return st, fmt.Errorf("make dev is not running (no %s): start it with `make dev` in another terminal", path)
	case err != nil:
		return st, fmt.Errorf("make dev is not running: %w", err)
	}
	return st, nil
}

// ReadLiveState returns the saved state if its components still answer.
func ReadLiveState(path string) (State, error) {
	var st State
	b, err := os.ReadFile(path)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, err
	}
	for _, endpoint := range append([]string{st.DynamoDB, st.SecretsManager}, st.GameFabric...) {
		u, err := url.Parse(endpoint)
		if err != nil {
			return st, err
		}
		conn, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err != nil {
			return st, errors.New("the stack in " + path + " is not running")
		}
		_ = conn.Close()
	}
	return st, nil
}
