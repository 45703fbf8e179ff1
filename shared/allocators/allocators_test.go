package allocators

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
)

// fakeSecrets counts reads per secret; the real Secrets Manager runs in
// the integration tests (tests/allocators_test.go).
type fakeSecrets struct {
	mu    sync.Mutex
	reads map[string]int
}

func (f *fakeSecrets) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads[*in.SecretId]++
	v := "token-of-" + *in.SecretId
	return &secretsmanager.GetSecretValueOutput{SecretString: &v}, nil
}

// recorder answers every call with an allocation and remembers where it went.
type recorder struct {
	mu    sync.Mutex
	calls []string // url, token, region
}

func (r *recorder) Do(req *http.Request) (*http.Response, error) {
	var body gamefabric.AllocateRequest
	_ = json.NewDecoder(req.Body).Decode(&body)
	r.mu.Lock()
	r.calls = append(r.calls, req.URL.String()+" "+req.Header.Get("Authorization")+" "+body.Region)
	r.mu.Unlock()
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(`{"address":"127.0.0.1:7777"}`)), Header: http.Header{}}, nil
}

func TestSetRoutesEachRegionToItsAllocator(t *testing.T) {
	cfg, err := config.LoadAllocate(func(k string) string {
		return map[string]string{
			"GAMEFABRIC_URL": "https://studio.example", "GAMEFABRIC_ALLOCATE_PATH": "allocator/prod/us/allocate",
			"ALLOCATOR_TOKEN_SECRET_ID": "default-secret", "BACKEND_ADDRESS": "https://backend.example", "GAME_INSTANCES_TABLE": "T",
			"GAMEFABRIC_ALLOCATORS": `{
				"eu-central-1": {"url": "https://eu.example/allocate", "region": "prod-eu-central", "tokenSecretId": "eu-secret"},
				"eu-west": {"url": "https://eu.example/allocate", "region": "prod-eu-west", "tokenSecretId": "eu-secret"},
				"ap-south": {"url": "https://ap.example/allocate"}
			}`,
		}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	sm, doer := &fakeSecrets{reads: map[string]int{}}, &recorder{}
	set := New(cfg, doer, sm)
	tests := []struct {
		region, wantID, wantCall string
	}{
		{"us-west", "https://studio.example/allocator/prod/us/allocate", "https://studio.example/allocator/prod/us/allocate Bearer token-of-default-secret us-west"},
		{"eu-central-1", "https://eu.example/allocate", "https://eu.example/allocate Bearer token-of-eu-secret prod-eu-central"},
		{"eu-west", "https://eu.example/allocate", "https://eu.example/allocate Bearer token-of-eu-secret prod-eu-west"},
		{"ap-south", "https://ap.example/allocate", "https://ap.example/allocate Bearer token-of-default-secret ap-south"},
	}
	for i, tc := range tests {
		up := set.For(tc.region)
		if up.ID != tc.wantID {
			t.Errorf("%s: ID = %q, want %q", tc.region, up.ID, tc.wantID)
		}
		token, err := up.Tokens.Token(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := up.Allocator.Allocate(context.Background(), token, allocation.UpstreamRequest{Region: up.Region}); err != nil {
			t.Fatal(err)
		}
		if got := doer.calls[i]; got != tc.wantCall {
			t.Errorf("%s: call = %q, want %q", tc.region, got, tc.wantCall)
		}
	}
	// One cached token source per secret: two regions, one read.
	if sm.reads["eu-secret"] != 1 || sm.reads["default-secret"] != 1 {
		t.Errorf("secret reads = %v, want one per secret", sm.reads)
	}
	if set.For("eu-west").Tokens != set.For("eu-central-1").Tokens {
		t.Error("regions with the same secret do not share its token source")
	}
}
