package allocation

import (
	"crypto/rand"
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
