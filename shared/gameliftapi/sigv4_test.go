package gameliftapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/smithy-go/encoding/cbor"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// signed is a JSON 1.1 (or, with cborBody, RPC v2 CBOR) request signed by
// the SDK's signer as botocore signs: content-type, host, x-amz-date,
// x-amz-target (or smithy-protocol).
func signed(t *testing.T, op, body string, at time.Time, scopeRegion, secretKey string, cborBody bool) Request {
	t.Helper()
	req, _ := http.NewRequest("POST", "https://abc.lambda-url.eu-west-1.on.aws/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "GameLift."+op)
	if cborBody {
		req.URL.Path = "/service/GameLift/operation/" + op
		req.Header.Del("X-Amz-Target")
		req.Header.Set("Content-Type", "application/cbor")
		req.Header.Set("Smithy-Protocol", "rpc-v2-cbor")
	}
	sum := sha256.Sum256([]byte(body))
	err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secretKey}, req,
		hex.EncodeToString(sum[:]), "gamelift", scopeRegion, at)
	if err != nil {
		t.Fatal(err)
	}
	// As Lambda delivers them, with the headers its front end adds.
	h := map[string]string{"host": req.Host, "content-length": strconv.Itoa(len(body)), "user-agent": "test", "x-forwarded-for": "203.0.113.9"}
	for k, v := range req.Header {
		h[strings.ToLower(k)] = strings.Join(v, ",")
	}
	return Request{Method: "POST", Path: req.URL.EscapedPath(), Header: h, Body: []byte(body)}
}

// Every way a signature can be wrong is UnauthorizedException, in the
// request's protocol; the way it is right passes. The JSON 1.1 error
// shape carries __type and Message.
func TestSignaturesAndProtocols(t *testing.T) {
	f := newFixture(t, gameinstance.StateQueued)
	now := time.Now().UTC()
	describe := `{"PlacementId": "pl-none"}`
	cborDescribe := string(cbor.Encode(cbor.Map{"PlacementId": cbor.String("pl-none")}))
	ok := func() Request {
		return signed(t, "DescribeGameSessionPlacement", describe, now, awsRegion, secret, false)
	}
	tests := []struct {
		name   string
		req    Request
		status int
		typ    string
	}{
		{"signed right: the operation runs", ok(), 400, NotFound},
		{"signed right, CBOR", signed(t, "DescribeGameSessionPlacement", cborDescribe, now, awsRegion, secret, true), 400, NotFound},
		{"a wrong secret key", signed(t, "DescribeGameSessionPlacement", describe, now, awsRegion, "wrong", false), 400, Unauthorized},
		{"another region's scope", signed(t, "DescribeGameSessionPlacement", describe, now, "us-east-1", secret, false), 400, Unauthorized},
		{"16 minutes old", signed(t, "DescribeGameSessionPlacement", describe, now.Add(-16*time.Minute), awsRegion, secret, false), 400, Unauthorized},
		{"a signed header altered", func() Request { r := ok(); r.Header["x-amz-target"] = "GameLift.StopGameSessionPlacement"; return r }(), 400, Unauthorized},
		{"the body altered", func() Request { r := ok(); r.Body = []byte(`{"PlacementId": "pl-other"}`); return r }(), 400, Unauthorized},
		{"the host altered", func() Request { r := ok(); r.Header["host"] = "evil.example"; return r }(), 400, Unauthorized},
		{"unsigned", func() Request { r := ok(); delete(r.Header, "authorization"); return r }(), 400, Unauthorized},
		{"an unknown key", func() Request {
			r := ok()
			r.Header["authorization"] = strings.Replace(r.Header["authorization"], keyID, "AKIDUNKNOWN", 1)
			return r
		}(), 400, Unauthorized},
		{"an unknown operation", signed(t, "DeleteFleet", `{}`, now, awsRegion, secret, false), 400, UnknownOperation},
		{"an unknown operation, CBOR", signed(t, "DeleteFleet", string(cbor.Encode(cbor.Map{})), now, awsRegion, secret, true), 404, UnknownOperation},
		{"not JSON", signed(t, "DescribeGameSessionPlacement", `{"PlacementId":`, now, awsRegion, secret, false), 400, InvalidRequest},
		{"not CBOR", signed(t, "DescribeGameSessionPlacement", describe, now, awsRegion, secret, true), 400, InvalidRequest},
		{"CBOR with X-Amz-Target", func() Request {
			r := signed(t, "DescribeGameSessionPlacement", cborDescribe, now, awsRegion, secret, true)
			r.Header["x-amz-target"] = "GameLift.DescribeGameSessionPlacement"
			return r
		}(), 400, InvalidRequest},
		{"a PlacementId off the pattern", signed(t, "DescribeGameSessionPlacement", `{"PlacementId": "pl_1"}`, now, awsRegion, secret, false), 400, InvalidRequest},
		{"over 256 KiB", signed(t, "DescribeGameSessionPlacement", `{"PlacementId": "`+strings.Repeat("x", 256<<10)+`"}`, now, awsRegion, secret, false), 400, InvalidRequest},
		{"no protocol at all", Request{Method: "GET", Path: "/", Header: map[string]string{}}, 400, UnknownOperation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.handler.Serve(context.Background(), tt.req, "req-1", "")
			var typ, msg string
			if res.Header["smithy-protocol"] == "rpc-v2-cbor" {
				v, err := cbor.Decode(res.Body)
				m, _ := v.(cbor.Map)
				if err != nil || m == nil || res.Header["Content-Type"] != "application/cbor" {
					t.Fatalf("a CBOR answer that is none: %x", res.Body)
				}
				typ, _ = asString(m["__type"])
				msg, _ = asString(m["Message"])
			} else {
				var m struct{ Type, Message string }
				if err := json.Unmarshal(res.Body, &m); err != nil || res.Header["Content-Type"] != "application/x-amz-json-1.1" {
					t.Fatalf("a JSON answer that is none: %s", res.Body)
				}
				typ, msg = m.Type, m.Message
				var raw map[string]any
				_ = json.Unmarshal(res.Body, &raw)
				typ, _ = raw["__type"].(string)
			}
			if res.Status != tt.status || typ != tt.typ || msg == "" {
				t.Fatalf("answered %d %s %q, want %d %s", res.Status, typ, msg, tt.status, tt.typ)
			}
			if strings.Contains(string(res.Body), secret) || strings.Contains(string(res.Body), "Signature=") {
				t.Fatalf("the answer quotes a credential: %s", res.Body)
			}
		})
	}
}

func asString(v cbor.Value) (string, bool) {
	s, ok := v.(cbor.String)
	return string(s), ok
}

// A secret replaced under the same access key id is refused at once: no
// key derived from the old one is kept between requests.
func TestAReplacedSecretIsRefused(t *testing.T) {
	ks := keys{keyID: secret}
	v := Verifier{Keys: ks, Region: awsRegion, Now: time.Now}
	req := signed(t, "DescribeGameSessionPlacement", `{"PlacementId": "pl"}`, time.Now().UTC(), awsRegion, secret, false)
	if err := v.Verify(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	ks[keyID] = "replaced"
	if err := v.Verify(context.Background(), req); err == nil {
		t.Fatal("a request signed with the replaced secret passed")
	}
}
