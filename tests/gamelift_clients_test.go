//go:build integration

package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/aws/smithy-go"

	localstack "github.com/gamefabric-alloc/allocsvc/local/stack"
)

// The three real clients a GameLift backend may run, behind one interface:
// each call's input is the operation's input structure as JSON (what the
// AWS CLI's --cli-input-json takes), its answer the GameSessionPlacement
// reduced to what every client reads alike, or the error's type.

// placementCall is one operation: op is the botocore name
// (start_game_session_placement), input its JSON input.
type placementCall struct {
	op       string
	input    map[string]any
	wrongKey bool
}

// seen is an answer as a client saw it: the placement's members that must
// read the same through every client, or the error type.
type seen struct {
	Status, Error, Region, IP, PortType string
	Placed                              int
	HasStart, HasEnd                    bool
}

func (s seen) String() string {
	if s.Error != "" {
		return s.Error
	}
	return fmt.Sprintf("%s region=%s ip=%v port=%s placed=%d start=%v end=%v", s.Status, s.Region, s.IP != "", s.PortType, s.Placed, s.HasStart, s.HasEnd)
}

type placementClient interface {
	call(t *testing.T, c placementCall) seen
}

// goClient is aws-sdk-go-v2/service/gamelift: Smithy RPC v2 CBOR.
type goClient struct{ ok, wrong *gamelift.Client }

func newGoClient(api *localstack.GameLiftAPI) goClient {
	client := func(secret string) *gamelift.Client {
		return gamelift.New(gamelift.Options{Region: api.Region, BaseEndpoint: aws.String(api.URL), Retryer: aws.NopRetryer{},
			Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: api.AccessKeyID, SecretAccessKey: secret}, nil
			})})
	}
	return goClient{ok: client(api.SecretAccessKey), wrong: client("wrong-" + api.SecretAccessKey)}
}

func (g goClient) call(t *testing.T, c placementCall) seen {
	t.Helper()
	cl, ctx := g.ok, context.Background()
	if c.wrongKey {
		cl = g.wrong
	}
	raw, _ := json.Marshal(c.input)
	var p *types.GameSessionPlacement
	var err error
	switch c.op {
	case "start_game_session_placement":
		var in gamelift.StartGameSessionPlacementInput
		mustUnmarshal(t, raw, &in)
		var out *gamelift.StartGameSessionPlacementOutput
		if out, err = cl.StartGameSessionPlacement(ctx, &in); err == nil {
			p = out.GameSessionPlacement
		}
	case "describe_game_session_placement":
		var out *gamelift.DescribeGameSessionPlacementOutput
		if out, err = cl.DescribeGameSessionPlacement(ctx, &gamelift.DescribeGameSessionPlacementInput{PlacementId: aws.String(c.input["PlacementId"].(string))}); err == nil {
			p = out.GameSessionPlacement
		}
	case "stop_game_session_placement":
		var out *gamelift.StopGameSessionPlacementOutput
		if out, err = cl.StopGameSessionPlacement(ctx, &gamelift.StopGameSessionPlacementInput{PlacementId: aws.String(c.input["PlacementId"].(string))}); err == nil {
			p = out.GameSessionPlacement
		}
	}
	if err != nil {
		return seen{Error: goErrorType(err)}
	}
	s := seen{Status: string(p.Status), Region: aws.ToString(p.GameSessionRegion), IP: aws.ToString(p.IpAddress), Placed: len(p.PlacedPlayerSessions),
		HasStart: p.StartTime != nil, HasEnd: p.EndTime != nil}
	if p.Port != nil {
		s.PortType = "int"
	}
	return s
}

// goErrorType names a typed error by its Go type: an error the SDK did
// not type is named as such, so it cannot pass for a typed one.
func goErrorType(err error) string {
	var (
		ire *types.InvalidRequestException
		nf  *types.NotFoundException
		ue  *types.UnauthorizedException
	)
	var api smithy.APIError
	switch {
	case errors.As(err, &ire):
		return "InvalidRequestException"
	case errors.As(err, &nf):
		return "NotFoundException"
	case errors.As(err, &ue):
		return "UnauthorizedException"
	case errors.As(err, &api):
		return "untyped " + api.ErrorCode()
	}
	return "transport: " + err.Error()
}

func mustUnmarshal(t *testing.T, raw []byte, into any) {
	t.Helper()
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatal(err)
	}
}

// botoDriver runs botocore calls read as JSON lines on stdin: AWS JSON 1.1,
// as botocore picks it from GameLift's model. Errors are named by their
// class, which botocore makes from the modeled __type.
const botoDriver = `
import sys, json, botocore.session
from botocore.config import Config
url, region, key, secret = sys.argv[1:5]
session = botocore.session.get_session()
def client(sec):
    return session.create_client('gamelift', region_name=region, endpoint_url=url, aws_access_key_id=key,
        aws_secret_access_key=sec, config=Config(retries={'max_attempts': 1}))
ok, wrong = client(secret), client('wrong-' + secret)
print(json.dumps({'protocol': ok.meta.service_model.resolved_protocol}), flush=True)
for line in sys.stdin:
    c = json.loads(line)
    cl = wrong if c.get('wrongKey') else ok
    try:
        p = getattr(cl, c['op'])(**c['input'])['GameSessionPlacement']
        p['PortType'] = type(p['Port']).__name__ if 'Port' in p else ''
        print(json.dumps(p, default=str), flush=True)
    except cl.exceptions.ClientError as e:
        typed = type(e).__name__ if type(e).__name__ != 'ClientError' else 'untyped ' + e.response['Error']['Code']
        print(json.dumps({'Error': typed}), flush=True)
`

type botoClient struct {
	mu  sync.Mutex
	in  io.Writer
	out *bufio.Scanner
}

func newBotoClient(t *testing.T, api *localstack.GameLiftAPI) *botoClient {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("the botocore client needs python3 (with botocore, as moto installs it) on PATH")
	}
	cmd := exec.Command("python3", "-c", botoDriver, api.URL, api.Region, api.AccessKeyID, api.SecretAccessKey)
	cmd.Env, cmd.Stderr = cleanAWSEnv(), os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start python3: %v", err)
	}
	t.Cleanup(func() { _ = in.Close(); _ = cmd.Wait() })
	b := &botoClient{in: in, out: bufio.NewScanner(out)}
	b.out.Buffer(make([]byte, 1<<20), 1<<20)
	var hello struct{ Protocol string }
	if !b.out.Scan() || json.Unmarshal(b.out.Bytes(), &hello) != nil {
		t.Fatal("python3 could not load botocore (it comes with moto: pip install moto[server])")
	}
	if hello.Protocol != "json" {
		t.Fatalf("botocore speaks %q to GameLift, not AWS JSON 1.1: this test no longer tests that protocol", hello.Protocol)
	}
	return b
}

func (b *botoClient) call(t *testing.T, c placementCall) seen {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	line, _ := json.Marshal(map[string]any{"op": c.op, "input": c.input, "wrongKey": c.wrongKey})
	if _, err := fmt.Fprintf(b.in, "%s\n", line); err != nil || !b.out.Scan() {
		t.Fatalf("botocore driver: %v", err)
	}
	return decodeSeen(t, b.out.Bytes())
}

// decodeSeen reads a GameSessionPlacement (or {"Error"}) as botocore and
// the AWS CLI print it.
func decodeSeen(t *testing.T, raw []byte) seen {
	t.Helper()
	var p struct {
		Status, Error, GameSessionRegion, IpAddress, PortType string
		Port                                                  json.RawMessage
		PlacedPlayerSessions                                  []any
		StartTime, EndTime                                    any
	}
	mustUnmarshal(t, raw, &p)
	s := seen{Status: p.Status, Error: p.Error, Region: p.GameSessionRegion, IP: p.IpAddress, PortType: p.PortType,
		Placed: len(p.PlacedPlayerSessions), HasStart: p.StartTime != nil, HasEnd: p.EndTime != nil}
	if s.PortType == "" && len(p.Port) > 0 && regexp.MustCompile(`^\d+$`).Match(p.Port) {
		s.PortType = "int" // the CLI prints the integer as parsed
	}
	return s
}

// cliClient is the AWS CLI (v1, botocore underneath), one process a call.
type cliClient struct{ api *localstack.GameLiftAPI }

var cliError = regexp.MustCompile(`An error occurred \((\w+)\)`)

func (c cliClient) call(t *testing.T, pc placementCall) seen {
	t.Helper()
	input, _ := json.Marshal(pc.input)
	secret := c.api.SecretAccessKey
	if pc.wrongKey {
		secret = "wrong-" + secret
	}
	cmd := exec.Command("aws", "gamelift", strings.ReplaceAll(pc.op, "_", "-"), "--endpoint-url", c.api.URL,
		"--cli-input-json", string(input), "--output", "json")
	cmd.Env = append(cleanAWSEnv(), "AWS_DEFAULT_REGION="+c.api.Region, "AWS_ACCESS_KEY_ID="+c.api.AccessKeyID, "AWS_SECRET_ACCESS_KEY="+secret,
		"AWS_MAX_ATTEMPTS=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if m := cliError.FindStringSubmatch(stderr.String()); m != nil {
			return seen{Error: m[1]}
		}
		t.Fatalf("aws gamelift %s: %v\n%s", pc.op, err, stderr.String())
	}
	var doc struct{ GameSessionPlacement json.RawMessage }
	mustUnmarshal(t, out, &doc)
	return decodeSeen(t, doc.GameSessionPlacement)
}

// cleanAWSEnv is the test's environment without any AWS setting of the
// machine's: no profile, credentials or endpoint of its own.
func cleanAWSEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	return append(env, "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_EC2_METADATA_DISABLED=true")
}

// pollUntil describes id until it is no longer PENDING (or within d).
func pollUntil(t *testing.T, c placementClient, id string, d time.Duration) seen {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := c.call(t, placementCall{op: "describe_game_session_placement", input: map[string]any{"PlacementId": id}})
		if s.Status != "PENDING" || time.Now().After(deadline) {
			return s
		}
		time.Sleep(300 * time.Millisecond)
	}
}
