package gameliftapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Keys are the access keys the API accepts (secrets.Keys).
type Keys interface {
	// Secret is id's secret key; found is false for an unknown id; an
	// error means no key could be read at all.
	Secret(ctx context.Context, id string) (secret string, found bool, err error)
}

// Verifier checks a request's SigV4 signature (header form), as GameLift's
// front end would: neither a function URL nor API Gateway can check one
// scoped to the gamelift service. It recomputes the signature with the
// SDK's own signer over the request as it arrived (the headers the client
// signed, the raw path and query, the body's hash) and compares in
// constant time. No key, signature or secret is ever logged or answered.
type Verifier struct {
	Keys Keys
	// Region is the only Region a credential scope may name.
	Region string
	Now    func() time.Time
}

const (
	signingService   = "gamelift"
	signingAlgorithm = "AWS4-HMAC-SHA256"
	// maxSkew is how far a request's time may be from ours, as AWS allows.
	maxSkew   = 15 * time.Minute
	amzFormat = "20060102T150405Z"
)

// Verify returns nil for a request signed with a key the API accepts, and
// UnauthorizedException (InternalServiceException when the keys cannot be
// read) otherwise.
func (v Verifier) Verify(ctx context.Context, r Request) error {
	auth, err := parseAuthorization(r.Header["authorization"])
	if err != nil {
		return unauthorized(err.Error())
	}
	at, err := time.Parse(amzFormat, r.Header["x-amz-date"])
	if err != nil {
		return unauthorized("X-Amz-Date is missing or not " + amzFormat)
	}
	if d := v.Now().Sub(at); d > maxSkew || d < -maxSkew {
		return unauthorized("the request's time (X-Amz-Date) is more than 15 minutes from the server's: check the clock or sign it again")
	}
	if auth.date != at.Format("20060102") || auth.region != v.Region || auth.service != signingService || auth.terminator != "aws4_request" {
		return unauthorized(fmt.Sprintf("the credential must be scoped to <date of X-Amz-Date>/%s/%s/aws4_request", v.Region, signingService))
	}
	secret, found, err := v.Keys.Secret(ctx, auth.keyID)
	if err != nil {
		return &Error{Type: InternalService, Message: "the access keys cannot be read for now; retry", Err: err}
	}
	if !found {
		return unauthorized("the access key is not one this API issued")
	}
	want, err := expected(ctx, r, auth, secret, at)
	if err != nil {
		return unauthorized(err.Error())
	}
	if subtle.ConstantTimeCompare([]byte(want), []byte(auth.signature)) != 1 {
		return unauthorized("the request signature does not match: check the secret key and sign the request as it is sent")
	}
	return nil
}

func unauthorized(msg string) *Error { return &Error{Type: Unauthorized, Message: msg} }

// authorization is a parsed Authorization header.
type authorization struct {
	keyID, date, region, service, terminator string
	signedHeaders                            []string
	signature                                string
}

// parseAuthorization reads "AWS4-HMAC-SHA256 Credential=<key>/<date>/
// <region>/<service>/aws4_request, SignedHeaders=a;b, Signature=<hex>".
func parseAuthorization(h string) (authorization, error) {
	var a authorization
	rest, ok := strings.CutPrefix(h, signingAlgorithm+" ")
	if !ok {
		return a, fmt.Errorf("the request is not signed with %s (Authorization header)", signingAlgorithm)
	}
	parts := map[string]string{}
	for _, p := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		parts[k] = v
	}
	scope := strings.Split(parts["Credential"], "/")
	if len(scope) != 5 || parts["SignedHeaders"] == "" || len(parts["Signature"]) != 64 {
		return a, fmt.Errorf("the Authorization header needs Credential, SignedHeaders and Signature")
	}
	a.keyID, a.date, a.region, a.service, a.terminator = scope[0], scope[1], scope[2], scope[3], scope[4]
	a.signedHeaders, a.signature = strings.Split(parts["SignedHeaders"], ";"), parts["Signature"]
	return a, nil
}

// expected is the signature r should carry: the SDK's signer run on a
// request made of r's method, raw path and query, and only the headers the
// client signed, as they arrived. It also refuses a signature that leaves
// out the host or the time.
func expected(ctx context.Context, r Request, a authorization, secret string, at time.Time) (string, error) {
	u, err := url.ParseRequestURI(r.Path)
	if err != nil {
		return "", fmt.Errorf("the request path cannot be signed")
	}
	u.RawQuery = r.Query
	req := &http.Request{Method: r.Method, URL: u, Header: http.Header{}, Host: r.Header["host"]}
	signed := map[string]bool{}
	for _, name := range a.signedHeaders {
		value, present := r.Header[name]
		if !present || signed[name] {
			return "", fmt.Errorf("a signed header (%s) is missing from the request", name)
		}
		signed[name] = true
		switch name {
		case "host":
		case "content-length":
			if req.ContentLength, err = strconv.ParseInt(value, 10, 64); err != nil {
				return "", fmt.Errorf("Content-Length is not a number")
			}
		default:
			req.Header[http.CanonicalHeaderKey(name)] = []string{value}
		}
	}
	if !signed["host"] || !signed["x-amz-date"] {
		return "", fmt.Errorf("the signature must cover the host and x-amz-date headers")
	}
	sum := sha256.Sum256(r.Body)
	creds := aws.Credentials{AccessKeyID: a.keyID, SecretAccessKey: secret}
	// A signer per request: the SDK's caches a derived key per access key
	// id and day without its secret, so a shared one would keep accepting
	// a secret replaced under the same id until midnight.
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), signingService, a.region, at); err != nil {
		return "", fmt.Errorf("the request cannot be signed")
	}
	got, err := parseAuthorization(req.Header.Get("Authorization"))
	if err != nil || strings.Join(got.signedHeaders, ";") != strings.Join(a.signedHeaders, ";") {
		// The signer signs every header it is given but those it never
		// signs (User-Agent and the like): a client that signed one of
		// those could not have been a standard SigV4 client.
		return "", fmt.Errorf("the signed headers are not ones a SigV4 signature covers")
	}
	return got.signature, nil
}
