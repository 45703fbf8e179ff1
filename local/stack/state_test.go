package stack

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestStateFileOfIsUnderTheRepository(t *testing.T) {
	got := StateFileOf(".cache/dev")
	if !filepath.IsAbs(got) || !strings.HasSuffix(got, filepath.Join(".cache", "dev", "stack.json")) {
		t.Fatalf("StateFileOf = %s", got)
	}
	if got := StateFileOf("/x"); got != filepath.Join("/x", "stack.json") {
		t.Fatalf("StateFileOf(/x) = %s", got)
	}
}
