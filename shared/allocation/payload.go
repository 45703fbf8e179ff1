package allocation

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// Payload is forwarded by GameFabric to the game server (Pragma's field names).
type Payload struct {
	GameInstanceID       string `json:"GameInstanceId"`
	PartnerGameToken     string `json:"PartnerGameToken"`
	PartnerSocialToken   string `json:"PartnerSocialToken"`
	PragmaBackendAddress string `json:"pragmaBackendAddress"`
	ServerArgs           string `json:"ServerArgs"`
}

// HashToken is how a partner game token is stored: base64url SHA-256.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// mintToken returns 256 random bits, base64url.
func mintToken(random func([]byte) error) (string, error) {
	b := make([]byte, 32)
	if err := random(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func cryptoRandom(b []byte) error {
	_, err := rand.Read(b)
	return err
}

// redactor hides credentials that an upstream might echo in an error body.
func redactor(secrets ...string) func(string) string {
	var pairs []string
	for _, s := range secrets {
		if len(s) >= 8 {
			pairs = append(pairs, s, "[redacted]")
		}
	}
	r := strings.NewReplacer(pairs...)
	return r.Replace
}
