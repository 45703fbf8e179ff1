//go:build integration

package tests

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pb33f/libopenapi-validator/config"
)

// authenticate checks a request's credentials against a security scheme
// of the document. The validator's own checks would demand an Authorization
// header on every backend route, and the local HTTP API, like every test
// that calls the handlers directly, does no IAM auth: there is no signature
// to check and none is needed. So:
//   - AWS SigV4 (x-amazon-apigateway-authtype: awsSigv4): an unsigned
//     request passes, because deployed, API Gateway's IAM authorizer refuses
//     it (403) before the service sees it. A request that is signed must
//     carry a well-formed SigV4 Authorization header (the signature itself
//     needs the caller's secret key and AWS to check).
//   - HTTP bearer: "Authorization: Bearer <token>" must be present; whether
//     the token is right is the service's to decide (401).
//
// A scheme of another kind fails: the document changed and this must learn it.
func authenticate(_ context.Context, in *config.AuthenticationInput) error {
	s := in.SecurityScheme
	header := in.Request.Header.Get("Authorization")
	switch {
	case isSigV4(s.Type, extension(in, "x-amazon-apigateway-authtype")):
		if header == "" {
			return nil
		}
		return checkSigV4(header)
	case strings.EqualFold(s.Type, "http") && strings.EqualFold(s.Scheme, "bearer"):
		scheme, token, _ := strings.Cut(strings.TrimSpace(header), " ")
		if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			return fmt.Errorf("security scheme %s needs Authorization: Bearer <%s>", in.SecuritySchemeName, s.BearerFormat)
		}
		return nil
	}
	return fmt.Errorf("security scheme %s (type %q) is not one the contract middleware knows how to check", in.SecuritySchemeName, s.Type)
}

func isSigV4(typ, authType string) bool {
	return strings.EqualFold(typ, "apiKey") && strings.EqualFold(authType, "awsSigv4")
}

func extension(in *config.AuthenticationInput, name string) string {
	if in.SecurityScheme.Extensions == nil {
		return ""
	}
	if n := in.SecurityScheme.Extensions.GetOrZero(name); n != nil {
		return n.Value
	}
	return ""
}

// checkSigV4 checks the shape of an AWS4-HMAC-SHA256 Authorization header:
// a credential scope for execute-api, the signed headers and a signature.
func checkSigV4(header string) error {
	rest, ok := strings.CutPrefix(header, "AWS4-HMAC-SHA256 ")
	if !ok {
		return errors.New("a signed request's Authorization header must start with AWS4-HMAC-SHA256")
	}
	fields := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		fields[k] = v
	}
	scope := strings.Split(fields["Credential"], "/")
	switch {
	case len(scope) != 5 || scope[3] != "execute-api" || scope[4] != "aws4_request":
		return errors.New("the SigV4 Credential must be <access key>/<date>/<region>/execute-api/aws4_request")
	case !strings.Contains(";"+fields["SignedHeaders"]+";", ";host;"):
		return errors.New("the SigV4 SignedHeaders must include host")
	case len(fields["Signature"]) != 64:
		return errors.New("the SigV4 Signature must be 64 hex digits")
	}
	return nil
}
