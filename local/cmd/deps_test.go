package cmd_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/gamefabric-alloc/allocsvc"

// TestToolsLinkNoTestCode keeps test code out of what ships or runs as a
// tool: no binary links package testing (test helpers live in local/testkit,
// which only tests import), and nothing under local/ or functions/ depends
// on a package from tests/.
func TestToolsLinkNoTestCode(t *testing.T) {
	binaries := []string{"./local/cmd/dev", "./local/cmd/invoke", "./local/cmd/bench", "./local/cmd/play", "./local/cmd/match", "./local/sampleserver", "./functions/..."}
	for _, pkg := range deps(t, binaries...) {
		if pkg == "testing" {
			t.Errorf("%v link package testing", binaries)
		}
	}
	for _, pkg := range deps(t, "./local/...", "./functions/...") {
		if strings.HasPrefix(pkg, module+"/tests") {
			t.Errorf("a package under local/ or functions/ depends on %s", pkg)
		}
	}
}

func deps(t *testing.T, patterns ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-deps"}, patterns...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %v: %v", patterns, err)
	}
	return strings.Fields(string(out))
}
