package proc

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestChildStopKillsWholeGroup(t *testing.T) {
	// The shell ignores SIGTERM and leaves a background grandchild, the two
	// ways a naive Process.Kill leaks processes.
	cmd := exec.Command("sh", "-c", `trap '' TERM; sleep 300 & echo $!; wait`)
	out := NewTailBuffer(0)
	cmd.Stdout, cmd.Stderr = out, out
	c, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	var grandchild int
	deadline := time.Now().Add(5 * time.Second)
	for grandchild == 0 && time.Now().Before(deadline) {
		grandchild, _ = strconv.Atoi(strings.TrimSpace(out.String()))
		time.Sleep(10 * time.Millisecond)
	}
	if grandchild == 0 {
		t.Fatalf("no grandchild pid printed; output %q", out.String())
	}

	start := time.Now()
	if err := c.Stop(200 * time.Millisecond); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Stop took %v", took)
	}
	if err := c.Stop(time.Second); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if !strings.Contains(c.ExitStatus(), "killed") {
		t.Fatalf("ExitStatus = %q, want killed", c.ExitStatus())
	}
	// SIGKILL is delivered asynchronously, so allow the grandchild a moment.
	for end := time.Now().Add(2 * time.Second); alive(grandchild) && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(grandchild) {
		t.Fatalf("grandchild %d still alive after Stop", grandchild)
	}
}

// alive treats zombies as dead: a killed grandchild is reparented to init,
// which in some sandboxes reaps it late or never.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func TestFreePortIsBindable(t *testing.T) {
	p, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if p <= 0 || p > 65535 {
		t.Fatalf("FreePort = %d", p)
	}
}
