package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
)

// Allocator is one running emulated GameFabric Allocator.
type Allocator struct {
	AllocatorConfig
	URL       string // http://127.0.0.1:<port>
	SecretARN string // its allocator tokens in Secrets Manager
	Emulator  *gfemu.Emulator
}

// prefix puts each Allocator's endpoints under its own path, as a
// GameFabric installation does (…/allocator/prod/us/servers).
func (a *Allocator) prefix() string { return "/allocator/" + a.Name }

// AllocatePath is the Allocation endpoint's path, without a leading slash.
func (a *Allocator) AllocatePath() string { return strings.TrimPrefix(a.prefix(), "/") + "/allocate" }

// AllocateURL is the Allocation endpoint.
func (a *Allocator) AllocateURL() string { return a.URL + "/" + a.AllocatePath() }

// RegistryURL is the Registry endpoint (game servers' ALLOC_URL).
func (a *Allocator) RegistryURL() string { return a.URL + a.prefix() + "/servers" }

// RegistryToken is the latest registry token (game servers' ALLOC_TOKEN).
func (a *Allocator) RegistryToken() string { return a.RegistryTokens[len(a.RegistryTokens)-1] }

// AllocatorToken is the latest allocator token, the one clients use.
func (a *Allocator) AllocatorToken() string { return a.AllocatorTokens[len(a.AllocatorTokens)-1] }

// PingService is the running emulated Ping Service.
type PingService struct {
	URL       string // the full URL, the one GameFabric shows for a Ping Service
	SecretARN string // its tokens in Secrets Manager
	Tokens    []string
	Service   *gfemu.PingService
}

// Token is the latest ping token.
func (p *PingService) Token() string { return p.Tokens[len(p.Tokens)-1] }

// startGameFabric serves every Allocator and the Ping Service, each on its
// own port with its own token secret.
func (c *Components) startGameFabric(ctx context.Context, gf GameFabricConfig, sm *secretsmanager.Client) error {
	var sources []gfemu.PingSource
	for _, ac := range gf.Allocators {
		arn, err := createTokenSecret(ctx, sm, "gamefabric/"+ac.Name+"/allocator-tokens", ac.AllocatorTokens)
		if err != nil {
			return fmt.Errorf("Allocator %s: %w", ac.Name, err)
		}
		a := &Allocator{AllocatorConfig: ac, SecretARN: arn}
		a.Emulator = gfemu.New(gfemu.Config{
			Prefix:          a.prefix(),
			AllocatorTokens: ac.AllocatorTokens,
			RegistryTokens:  ac.RegistryTokens,
			QPS:             ac.QPS,
			Burst:           ac.Burst,
			CallbackTimeout: gf.CallbackTimeout,
			CallbackBearer:  ac.CallbackAuth == CallbackAuthBearer,
		})
		if a.URL, err = c.serve(ac.Port, a.Emulator.Handler()); err != nil {
			return fmt.Errorf("GameFabric Allocator %s: %w", ac.Name, err)
		}
		c.Allocators = append(c.Allocators, a)
		sources = append(sources, gfemu.PingSource{Allocator: a.Emulator, Regions: regionNames(ac.Regions)})
	}
	arn, err := createTokenSecret(ctx, sm, "gamefabric/ping-tokens", gf.Ping.Tokens)
	if err != nil {
		return fmt.Errorf("the Ping Service: %w", err)
	}
	svc := gfemu.NewPingService(gfemu.PingConfig{Tokens: gf.Ping.Tokens, Sources: sources})
	url, err := c.serve(gf.Ping.Port, svc.Handler())
	if err != nil {
		return fmt.Errorf("GameFabric Ping Service: %w", err)
	}
	c.Ping = &PingService{URL: url + svc.Path(), SecretARN: arn, Tokens: gf.Ping.Tokens, Service: svc}
	return nil
}

// regionNames inverts Region name → region string, for the Ping Service
// to report Regions by name (validation keeps the strings distinct).
func regionNames(regions map[string]string) map[string]string {
	out := make(map[string]string, len(regions))
	for name, s := range regions {
		out[s] = name
	}
	return out
}

// createTokenSecret stores tokens the way GameFabric lists them and the
// functions read them: {"tokens": [...]}, the last one current.
func createTokenSecret(ctx context.Context, sm *secretsmanager.Client, name string, tokens []string) (string, error) {
	secret, _ := json.Marshal(map[string][]string{"tokens": tokens})
	out, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String(name), SecretString: aws.String(string(secret))})
	if err != nil {
		return "", fmt.Errorf("create the token secret %s: %w", name, err)
	}
	return *out.ARN, nil
}

// AllocatorFor is the Allocator serving region and the region string its
// game servers register with: the Allocator that lists region, else the
// first under region's own name (what the product does for a region that
// GAMEFABRIC_ALLOCATORS does not list).
func (c *Components) AllocatorFor(region string) (*Allocator, string) {
	for _, a := range c.Allocators {
		if s, ok := a.Regions[region]; ok {
			return a, s
		}
	}
	return c.Allocators[0], region
}

// FleetEnv is what GameFabric injects into every game server container of
// region once an Allocator is attached to it (GameFabric's docs,
// architecture/allocators.md). ALLOC_PRIORITY is the index of the Region
// Type; locally there is one.
func (c *Components) FleetEnv(region string) []string {
	if c.Agones != nil && region == c.Agones.Region {
		// Agones' SDK server names the payload's annotations (slotEnv
		// adds each process's SDK server and game port).
		return []string{"ALLOC_PAYLOAD_ANNOTATION=payload-"}
	}
	a, s := c.AllocatorFor(region)
	return []string{"ALLOC_URL=" + a.RegistryURL(), "ALLOC_TOKEN=" + a.RegistryToken(), "ALLOC_REGION=" + s, "ALLOC_PRIORITY=0"}
}

// AllocatorsParameter is the template parameter Allocators
// (GAMEFABRIC_ALLOCATORS): every listed Region → its Allocator's URL,
// region string and token secret, and the Agones Region's entry; "" when
// no Allocator lists a Region.
func (c *Components) AllocatorsParameter() string {
	entries := map[string]any{}
	for _, a := range c.Allocators {
		for region, s := range a.Regions {
			entries[region] = map[string]string{"url": a.AllocateURL(), "region": s, "tokenSecretId": a.SecretARN}
		}
	}
	if c.Agones != nil {
		entries[c.Agones.Region] = c.Agones.entry()
	}
	if len(entries) == 0 {
		return ""
	}
	b, _ := json.Marshal(entries) // sorted keys: the same stack gives the same value
	return string(b)
}

// gameFabricRefs are the template parameters that point the functions at
// the emulated installation. The first Allocator is the installation's
// default (GameFabricUrl + GameFabricAllocatePath, AllocatorTokenSecretArn).
func (c *Components) gameFabricRefs() map[string]string {
	first := c.Allocators[0]
	var extra []string
	for _, a := range c.Allocators[1:] {
		extra = append(extra, a.SecretARN)
	}
	if c.Agones != nil { // in the functions' IAM scope, as a token secret is
		extra = append(extra, c.Agones.SecretARN)
	}
	return map[string]string{
		"GameFabricUrl":            first.URL,
		"GameFabricAllocatePath":   first.AllocatePath(),
		"AllocatorTokenSecretArn":  first.SecretARN,
		"AllocatorTokenSecretArns": strings.Join(extra, ","),
		"Allocators":               c.AllocatorsParameter(),
		"GameFabricPingUrl":        c.Ping.URL,
		"PingTokenSecretArn":       c.Ping.SecretARN,
	}
}
