package allocclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

var staticCreds = credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session-token")

// verify recomputes r's signature the way API Gateway does: from the
// headers the Authorization names, the body's hash and X-Amz-Date, with
// the same secret. It returns what is wrong, or "".
func verify(r seen) string {
	auth := r.header.Get("Authorization")
	const prefix = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"
	if !strings.HasPrefix(auth, prefix) {
		return "Authorization " + auth
	}
	date, err := time.Parse("20060102T150405Z", r.header.Get("X-Amz-Date"))
	if err != nil {
		return "X-Amz-Date " + r.header.Get("X-Amz-Date")
	}
	if !strings.Contains(auth, "/"+date.Format("20060102")+"/eu-west-1/execute-api/aws4_request") {
		return "scope " + auth
	}
	if r.header.Get("X-Amz-Security-Token") != "session-token" {
		return "no session token"
	}
	_, signed, _ := strings.Cut(auth, "SignedHeaders=")
	signed, _, _ = strings.Cut(signed, ",")
	req, _ := http.NewRequest(r.method, "http://"+r.host+r.path, bytes.NewReader(r.body))
	for _, h := range strings.Split(signed, ";") {
		if h != "host" && h != "content-length" {
			req.Header[http.CanonicalHeaderKey(h)] = r.header.Values(h)
		}
	}
	req.Header.Del("Authorization")
	sum := sha256.Sum256(r.body)
	creds, _ := staticCreds.Retrieve(context.Background())
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "execute-api", "eu-west-1", date); err != nil {
		return err.Error()
	}
	if got := req.Header.Get("Authorization"); got != auth {
		return "signature mismatch:\n" + auth + "\nrecomputed:\n" + got
	}
	return ""
}

func TestRequestsAreSignedAfreshEachTry(t *testing.T) {
	s := &scripted{replies: []reply{errReply(409, CodeAllocationInProgress, "1"), created}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, err := New(Options{BaseURL: srv.URL, Credentials: staticCreds, Region: "eu-west-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Allocate(context.Background(), AllocateRequest{GameInstanceID: "gi-signed", DesiredRegion: "us-west"}); err != nil {
		t.Fatal(err)
	}
	s.replies = []reply{{status: 200, body: `{"regions":[]}`, header: map[string]string{"ETag": `"e1"`}}}
	if _, err := c.Regions(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := s.requests()
	if len(got) != 3 {
		t.Fatalf("%d requests", len(got))
	}
	for i, r := range got {
		if problem := verify(r); problem != "" {
			t.Fatalf("request %d (%s %s): %s", i, r.method, r.path, problem)
		}
	}
	// The retry is signed again, with its own date, not replayed.
	if got[0].header.Get("X-Amz-Date") == got[1].header.Get("X-Amz-Date") || got[0].header.Get("Authorization") == got[1].header.Get("Authorization") {
		t.Fatalf("the retry reused the first signature: %s", got[1].header.Get("Authorization"))
	}

	// A tampered body fails the recomputation: the check can fail.
	tampered := got[0]
	tampered.body = bytes.Replace(tampered.body, []byte("us-west"), []byte("eu-west"), 1)
	if verify(tampered) == "" {
		t.Fatal("a changed body still verified")
	}
}

func TestUnsignedSendsNoAuthorization(t *testing.T) {
	c, s := newScripted(t, Options{}, created)
	if _, err := c.Allocate(context.Background(), AllocateRequest{GameInstanceID: "gi-r"}); err != nil {
		t.Fatal(err)
	}
	h := s.requests()[0].header
	if h.Get("Authorization") != "" || h.Get("X-Amz-Date") != "" || h.Get("X-Amz-Security-Token") != "" {
		t.Fatalf("unsigned request carries %v", h)
	}
}

type failingCreds struct{}

func (failingCreds) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{}, context.DeadlineExceeded
}

func TestCredentialFailureIsNotRetried(t *testing.T) {
	c, s := newScripted(t, Options{Credentials: failingCreds{}, Region: "eu-west-1"}, created)
	_, err := c.Allocate(context.Background(), AllocateRequest{GameInstanceID: "gi-r"})
	if err == nil || !strings.Contains(err.Error(), "retrieve AWS credentials") || len(s.requests()) != 0 {
		t.Fatalf("err = %v, %d requests", err, len(s.requests()))
	}
}

func TestNewFromEnvironment(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
	t.Setenv("AWS_SESSION_TOKEN", "session-token")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_REGION", "us-east-2")
	tests := []struct{ url, wantRegion string }{
		{"https://abc123.execute-api.eu-west-1.amazonaws.com", "eu-west-1"}, // the endpoint's region wins
		{"https://api.example.com", "us-east-2"},
	}
	for _, tc := range tests {
		c, err := NewFromEnvironment(context.Background(), tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if c.region != tc.wantRegion || c.creds == nil {
			t.Errorf("%s: region %q", tc.url, c.region)
		}
	}
	// And it signs with what the chain found.
	c, s := newScripted(t, Options{}, created)
	env, err := NewFromEnvironment(context.Background(), "https://abc123.execute-api.eu-west-1.amazonaws.com")
	if err != nil {
		t.Fatal(err)
	}
	c.creds, c.region, c.signer = env.creds, env.region, env.signer
	if _, err := c.Allocate(context.Background(), AllocateRequest{GameInstanceID: "gi-env"}); err != nil {
		t.Fatal(err)
	}
	if problem := verify(s.requests()[0]); problem != "" {
		t.Fatal(problem)
	}
}
