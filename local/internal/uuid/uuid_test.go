package uuid

import (
	"regexp"
	"testing"
)

func TestNewIsAVersion4UUID(t *testing.T) {
	form := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 100 {
		id := New()
		if !form.MatchString(id) || seen[id] {
			t.Fatalf("%q: not a fresh version 4 UUID", id)
		}
		seen[id] = true
	}
}
