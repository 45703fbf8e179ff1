package fleet

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/testkit"
)

func sh(script string, n int) Process {
	return Process{Command: "sh", Args: []string{"-c", script}, ConcurrentExecutions: n}
}

// start starts a fleet that the test stops (again) on cleanup, so nothing
// outlives a failed test.
func start(t *testing.T, cfg Config) (*Fleet, *testkit.SyncBuffer) {
	t.Helper()
	out := &testkit.SyncBuffer{}
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	if cfg.Stagger == 0 {
		cfg.Stagger = 10 * time.Millisecond
	}
	cfg.Output = out
	f, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = f.Stop()
		if t.Failed() {
			t.Logf("fleet output:\n%s", out)
		}
	})
	return f, out
}

// pidIn waits for a pid a child wrote into a file.
func pidIn(t *testing.T, path string) int {
	t.Helper()
	var pid int
	testkit.WaitFor(t, 10*time.Second, path, func() bool {
		raw, err := os.ReadFile(path)
		if err != nil || !bytes.HasSuffix(raw, []byte("\n")) {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(raw)))
		return err == nil
	})
	return pid
}

// alive counts a zombie as dead: an orphan's new parent (init, or a
// container's PID 1) may be slow to reap it, or never do so.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	_, rest, _ := bytes.Cut(stat, []byte(") "))
	return !bytes.HasPrefix(rest, []byte("Z"))
}

func assertDead(t *testing.T, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		testkit.WaitFor(t, 10*time.Second, "pid "+strconv.Itoa(pid)+" to be gone", func() bool { return !alive(pid) })
	}
}

func TestKeepsConcurrentExecutionsRunningAndStops(t *testing.T) {
	dir := t.TempDir()
	f, out := start(t, Config{
		Dir: dir,
		Regions: map[string][]Process{
			"eu-central": {{Command: "sh", Args: []string{"-c", `echo "$TAG $ALLOC_REGION $SLOT up in $PWD"; echo $$ > pid; exec sleep 60`},
				Env: []string{"TAG=blue"}, ConcurrentExecutions: 2}},
			"us-west": {sh(`echo $$ > pid; exec sleep 60`, 1)},
		},
		ExtraEnv: func(region string, slot int) []string {
			return []string{"ALLOC_REGION=" + region, "SLOT=" + strconv.Itoa(slot)}
		},
	})
	testkit.WaitFor(t, 10*time.Second, "three processes", func() bool {
		return reflect.DeepEqual(f.Running(), map[string]int{"eu-central": 2, "us-west": 1})
	})
	if n := f.Launches(); n != 3 {
		t.Fatalf("launches %d, want 3", n)
	}
	var pids []int
	for _, slotDir := range []string{"eu-central/0", "eu-central/1", "us-west/0"} {
		pids = append(pids, pidIn(t, filepath.Join(dir, slotDir, "pid")))
	}
	testkit.WaitFor(t, 10*time.Second, "both greetings", func() bool {
		return strings.Contains(out.String(), "[eu-central/1] blue eu-central 1 up in "+filepath.Join(dir, "eu-central", "1")) &&
			strings.Contains(out.String(), "[eu-central/0] blue eu-central 0 up in ")
	})

	began := time.Now()
	if err := f.Stop(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > 2*time.Second {
		t.Fatalf("Stop took %s for processes that obey SIGTERM", took)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d survived Stop", pid)
		}
	}
	if got := f.Running(); !reflect.DeepEqual(got, map[string]int{"eu-central": 0, "us-west": 0}) {
		t.Fatalf("running after Stop: %v", got)
	}
	if err := f.Stop(); err != nil { // idempotent
		t.Fatal(err)
	}
	if n := f.Launches(); n != 3 {
		t.Fatalf("relaunched while stopping: %d launches", n)
	}
}

func TestRelaunchesExitedProcesses(t *testing.T) {
	f, out := start(t, Config{
		RestartBackoff: 20 * time.Millisecond,
		Regions:        map[string][]Process{"us-west": {sh(`echo run; sleep 0.1`, 1)}},
	})
	testkit.WaitFor(t, 10*time.Second, "three launches", func() bool { return f.Launches() >= 3 })
	if err := f.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[us-west/0] run\n", "[us-west/0] fleet: exit status 0 after ", "relaunching in 20ms", "relaunching in 40ms"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestStaggersLaunches(t *testing.T) {
	f, _ := start(t, Config{
		Stagger: 150 * time.Millisecond,
		Regions: map[string][]Process{"r": {sh("exec sleep 60", 3)}},
	})
	began := time.Now()
	testkit.WaitFor(t, 10*time.Second, "three processes", func() bool { return f.Running()["r"] == 3 })
	if took := time.Since(began); took < 250*time.Millisecond {
		t.Fatalf("three launches in %s with a 150ms stagger", took)
	}
}

func TestKillsAfterStopGrace(t *testing.T) {
	dir := t.TempDir()
	f, out := start(t, Config{
		Dir:       dir,
		StopGrace: 300 * time.Millisecond,
		Regions:   map[string][]Process{"r": {sh(`trap "" TERM; echo $$ > pid; while :; do sleep 0.05; done`, 1)}},
	})
	pid := pidIn(t, filepath.Join(dir, "r", "0", "pid"))
	began := time.Now()
	if err := f.Stop(); err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	if took < 300*time.Millisecond || took > 3*time.Second {
		t.Fatalf("Stop took %s; want the 300ms grace, then a kill", took)
	}
	if alive(pid) {
		t.Fatalf("pid %d ignored SIGTERM and survived", pid)
	}
	if !strings.Contains(out.String(), "signal: killed after the stop grace period") {
		t.Fatalf("output:\n%s", out)
	}
}

func TestGrandchildrenDieWithTheirGroup(t *testing.T) {
	dir := t.TempDir()
	f, _ := start(t, Config{
		Dir:            dir,
		RestartBackoff: time.Minute, // one launch only
		Regions: map[string][]Process{
			// The leader exits at once, leaving a background child behind.
			"left": {sh(`sleep 60 & echo $! > gpid; exit 3`, 1)},
			// The leader is stopped while its child runs.
			"stopped": {sh(`sleep 60 & echo $! > gpid; wait`, 1)},
		},
	})
	orphan := pidIn(t, filepath.Join(dir, "left", "0", "gpid"))
	child := pidIn(t, filepath.Join(dir, "stopped", "0", "gpid"))
	assertDead(t, orphan) // before any Stop
	if !alive(child) {
		t.Fatal("the stopped slot's child died early")
	}
	if err := f.Stop(); err != nil {
		t.Fatal(err)
	}
	assertDead(t, child)
}

func TestContextCancelStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	f, err := Start(ctx, Config{Dir: dir, Stagger: time.Millisecond, Regions: map[string][]Process{"r": {sh("echo $$ > pid; exec sleep 60", 1)}}})
	if err != nil {
		t.Fatal(err)
	}
	pid := pidIn(t, filepath.Join(dir, "r", "0", "pid"))
	cancel()
	testkit.WaitFor(t, 10*time.Second, "no process", func() bool { return f.Running()["r"] == 0 })
	if err := f.Stop(); err != nil {
		t.Fatal(err)
	}
	if alive(pid) {
		t.Fatalf("pid %d survived the cancel", pid)
	}
}

func TestStartValidates(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no dir", Config{Regions: map[string][]Process{"r": {sh("true", 1)}}}, "the Dir option is required"},
		{"no executions", Config{Dir: t.TempDir(), Regions: map[string][]Process{"r": {sh("true", 0)}}}, "ConcurrentExecutions must be at least 1"},
		{"no command", Config{Dir: t.TempDir(), Regions: map[string][]Process{"r": {{Command: "no-such-command-x9", ConcurrentExecutions: 1}}}}, "no-such-command-x9"},
		{"bad region", Config{Dir: t.TempDir(), Regions: map[string][]Process{"../r": {sh("true", 1)}}}, `region "../r"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Start(context.Background(), tc.cfg)
			if err == nil {
				f.Stop()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q lacks %q", err, tc.want)
			}
		})
	}
}

func TestRestartDelay(t *testing.T) {
	base, ceiling := 500*time.Millisecond, 10*time.Second
	next := base
	var delays []time.Duration
	for range 7 { // dying young again and again
		var d time.Duration
		d, next = restartDelay(next, base, ceiling, time.Second)
		delays = append(delays, d)
	}
	want := []time.Duration{base, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, ceiling, ceiling}
	if !reflect.DeepEqual(delays, want) {
		t.Fatalf("delays %v, want %v", delays, want)
	}
	// A healthy run starts over.
	if d, after := restartDelay(next, base, ceiling, 6*time.Second); d != base || after != base {
		t.Fatalf("after a healthy run: %s then %s", d, after)
	}
}

func TestCopyLinesPrefixesEveryLine(t *testing.T) {
	var buf bytes.Buffer
	long := strings.Repeat("x", 5000)
	w := &lineWriter{out: &buf, prefix: "[p] "}
	_, _ = io.Copy(w, strings.NewReader("one\ntwo\n"+long+"\nlast"))
	w.flush()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 5 || lines[0] != "[p] one" || lines[1] != "[p] two" || lines[4] != "[p] last" {
		t.Fatalf("lines %q", lines)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "[p] ") {
			t.Fatalf("unprefixed line %.20q", l)
		}
	}
}
