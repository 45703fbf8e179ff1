package allocation

import (
	"crypto/rand"
	"encoding/base64"
	"strings"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Payload is forwarded by GameFabric to the game server (Pragma's field
// names). A GameLift placement's game session adds GameLift's own fields,
// each top-level and left out when empty, so every other payload is as it
// was.
type Payload struct {
	GameInstanceID       string `json:"GameInstanceId"`
	PartnerGameToken     string `json:"PartnerGameToken"`
	PartnerSocialToken   string `json:"PartnerSocialToken"`
	PragmaBackendAddress string `json:"pragmaBackendAddress"`
	ServerArgs           string `json:"ServerArgs"`

	GameSessionName           string                       `json:"GameSessionName,omitempty"`
	GameProperties            []gameinstance.GameProperty  `json:"GameProperties,omitempty"`
	GameSessionData           string                       `json:"GameSessionData,omitempty"`
	MaximumPlayerSessionCount *int                         `json:"MaximumPlayerSessionCount,omitempty"`
	DesiredPlayerSessions     []gameinstance.PlayerSession `json:"DesiredPlayerSessions,omitempty"`
}

// payload is what spec's game server is told (its link-back token apart,
// which each try sets).
func (spec Spec) payload(backendAddress string) Payload {
	p := Payload{
		GameInstanceID:       spec.GameInstanceID,
		PartnerSocialToken:   spec.PartnerSocialToken,
		PragmaBackendAddress: backendAddress,
		ServerArgs:           spec.Fingerprint.ServerArgs,
	}
	if gs := spec.Session; gs != nil {
		p.GameSessionName, p.GameProperties, p.GameSessionData = gs.Name, gs.Properties, gs.Data
		p.MaximumPlayerSessionCount, p.DesiredPlayerSessions = gs.MaximumPlayerSessionCount, gs.DesiredPlayerSessions
	}
	return p
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
