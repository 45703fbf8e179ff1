// Package uuid makes random (version 4) UUIDs, the form of Lambda's
// request ids and FlexMatch's match ids, for the local tools.
package uuid

import (
	"crypto/rand"
	"fmt"
)

// New is a random UUID in its canonical form, lower case.
func New() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand since Go 1.24)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
