package gameinstance

import (
	"crypto/sha256"
	"encoding/base64"
)

// HashToken is how a partner game token is stored: base64url SHA-256.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
