// Package allocclient is the Go client a game backend uses to call the
// allocation service: allocate, get, end and list regions, signed with
// SigV4 from the AWS credentials chain, retried the way the service's
// answers ask (Retry-After, the same gameInstanceId), failing with a typed
// *Error that carries the service's error code.
//
// A placement may wait for capacity instead of failing with NO_CAPACITY
// (AllocateRequest.QueueTimeoutSeconds): Allocate then answers a Queued
// Allocation, and AllocateAndWait follows it to its end by polling as the
// service's Retry-After asks, bounded by the caller's context.
package allocclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/gamefabric-alloc/allocsvc/shared/wait"
)

// Defaults for the zero values of Options.
const (
	DefaultTimeout     = 35 * time.Second // above API Gateway's 30 s, so its answer arrives
	DefaultMaxAttempts = 4
	DefaultMaxWait     = 10 * time.Second
)

// Options configure a Client. Zero values are sensible defaults.
type Options struct {
	// BaseURL is the API's URL, e.g. https://abc.execute-api.eu-west-1.amazonaws.com
	// or http://127.0.0.1:3000; a path (a stage) is kept.
	BaseURL string
	// HTTPClient defaults to one with a DefaultTimeout per try and a pooled transport.
	HTTPClient *http.Client
	// Credentials sign every request with SigV4; nil sends them unsigned
	// (the local HTTP API does no IAM auth).
	Credentials aws.CredentialsProvider
	// Region is the SigV4 region (service "execute-api"); required with Credentials.
	Region string
	// MaxAttempts is the number of tries per call, the first included;
	// default DefaultMaxAttempts, 1 = no retries.
	MaxAttempts int
	// MaxWait caps one wait between tries: Retry-After is honoured up to
	// it. Default DefaultMaxWait.
	MaxWait time.Duration
}

// Client calls the allocation service. It is safe for concurrent use.
type Client struct {
	base        *url.URL
	http        *http.Client
	creds       aws.CredentialsProvider
	region      string
	signer      *v4.Signer
	maxAttempts int
	maxWait     time.Duration
	// sleep is every wait between calls (retries, AllocateAndWait's polls);
	// tests swap it to count the waits instead of spending them.
	sleep func(ctx context.Context, d time.Duration) error

	// The last GET /v1/regions answer, revalidated with If-None-Match.
	regionsMu   sync.Mutex
	regionsETag string
	regions     *Regions
}

// New checks o and builds a Client.
func New(o Options) (*Client, error) {
	base, err := url.Parse(strings.TrimRight(o.BaseURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("allocclient: BaseURL %q must be an http or https URL", o.BaseURL)
	}
	if base.User != nil || base.RawQuery != "" || base.Fragment != "" {
		return nil, fmt.Errorf("allocclient: BaseURL must have no user, query or fragment")
	}
	if o.MaxAttempts < 0 || o.MaxWait < 0 {
		return nil, errors.New("allocclient: MaxAttempts and MaxWait must not be negative")
	}
	if o.Credentials != nil && o.Region == "" {
		return nil, errors.New("allocclient: Region is required to sign with Credentials")
	}
	c := &Client{base: base, http: o.HTTPClient, creds: o.Credentials, region: o.Region,
		maxAttempts: o.MaxAttempts, maxWait: o.MaxWait, sleep: wait.Sleep}
	if c.http == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns, t.MaxIdleConnsPerHost = 100, 100 // a backend calls one host, often concurrently
		c.http = &http.Client{Timeout: DefaultTimeout, Transport: t}
	}
	if c.maxAttempts == 0 {
		c.maxAttempts = DefaultMaxAttempts
	}
	if c.maxWait == 0 {
		c.maxWait = DefaultMaxWait
	}
	if c.creds != nil {
		// Every call signs: a provider that fetches (STS, IMDS) must not
		// be asked every time.
		if _, cached := c.creds.(*aws.CredentialsCache); !cached {
			c.creds = aws.NewCredentialsCache(c.creds)
		}
		c.signer = v4.NewSigner()
	}
	return c, nil
}

// executeAPIHost is an API Gateway default endpoint; its region is the one to sign for.
var executeAPIHost = regexp.MustCompile(`^[a-z0-9]+\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$`)

// NewFromEnvironment loads the AWS SDK default config (credentials chain,
// region) and signs with it. The region is the one in baseURL's host when
// it is an execute-api endpoint, the SDK's (AWS_REGION, profile) otherwise.
func NewFromEnvironment(ctx context.Context, baseURL string) (*Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("allocclient: load the AWS config: %w", err)
	}
	region := cfg.Region
	if u, err := url.Parse(baseURL); err == nil {
		if m := executeAPIHost.FindStringSubmatch(u.Hostname()); m != nil {
			region = m[1]
		}
	}
	if region == "" {
		return nil, errors.New("allocclient: no AWS region: set AWS_REGION or use the execute-api URL")
	}
	return New(Options{BaseURL: baseURL, Credentials: cfg.Credentials, Region: region})
}
