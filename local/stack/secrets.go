package stack

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
)

// GeneratedSecret is a secret of the template the stack created in moto
// as CloudFormation would (GenerateSecretString): its ARN, and the key
// and value it generated (GameLiftApiKeys: an access key pair).
type GeneratedSecret struct{ ARN, Key, Value string }

// createSecrets creates the template's generated secrets that params
// create, each {<GenerateStringKey>: <random letters and digits>} in its
// SecretStringTemplate.
func (c *Components) createSecrets(ctx context.Context, params map[string]string, sm *secretsmanager.Client) error {
	secrets, err := c.Template.Secrets(params)
	if err != nil {
		return err
	}
	c.Secrets = map[string]GeneratedSecret{}
	for _, s := range secrets {
		doc := map[string]any{}
		if err := json.Unmarshal([]byte(s.Template), &doc); err != nil {
			return fmt.Errorf("secret %s: SecretStringTemplate is not a JSON object: %w", s.LogicalID, err)
		}
		g := GeneratedSecret{Key: s.Key, Value: alphanumeric(s.Length)}
		doc[s.Key] = g.Value
		body, _ := json.Marshal(doc)
		out, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String("local/" + s.LogicalID), SecretString: aws.String(string(body))})
		if err != nil {
			return fmt.Errorf("create secret %s: %w", s.LogicalID, err)
		}
		g.ARN = *out.ARN
		c.Secrets[s.LogicalID] = g
	}
	return nil
}

// alphanumeric is n random letters and digits (ExcludePunctuation).
func alphanumeric(n int) string {
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = chars[int(b[i])%len(chars)]
	}
	return string(b)
}

// GameLiftAPI is where the stack serves GameLift's placement API and the
// key pair it generated for it (GameLiftApiKeys).
type GameLiftAPI struct {
	URL             string `json:"url"`
	Region          string `json:"region"` // the functions' AWS Region: the signatures' scope
	AccessKeyID     string `json:"accessKeyId"`
	SecretAccessKey string `json:"secretAccessKey"`
}

// GameLiftAPI is nil when the stack serves no GameLiftApiFunction URL.
func (s *Stack) GameLiftAPI() *GameLiftAPI {
	keys, ok := s.Secrets["GameLiftApiKeys"]
	for _, u := range s.FunctionURLs {
		if u.FunctionLogicalID == "GameLiftApiFunction" && ok {
			return &GameLiftAPI{URL: u.URL, Region: harness.Region, AccessKeyID: keys.Key, SecretAccessKey: keys.Value}
		}
	}
	return nil
}
