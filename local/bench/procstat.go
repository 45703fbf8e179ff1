package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat and /proc/stat;
// Linux fixes it at 100 for user space on every architecture we run on.
const userHZ = 100

// Classifier names the group a process belongs to, or "" to ignore it.
type Classifier func(pid int, exe string, cmdline []string) string

// CPUUsage is CPU time used over an interval, in cores (1.0 = one core busy).
type CPUUsage struct {
	Elapsed time.Duration
	ByGroup map[string]float64
	Machine float64 // every process on the machine, from /proc/stat
	Cores   int
}

// Ours is the CPU of every classified group, in cores.
func (u CPUUsage) Ours() float64 {
	var sum float64
	for _, v := range u.ByGroup {
		sum += v
	}
	return sum
}

// Others is the CPU of every other process on the machine, in cores: work
// this run does not control, which competes for the same cores.
func (u CPUUsage) Others() float64 { return max(0, u.Machine-u.Ours()) }

// Top is the busiest group.
func (u CPUUsage) Top() (string, float64) {
	name, best := "", -1.0
	for g, v := range u.ByGroup {
		if v > best || (v == best && g < name) {
			name, best = g, v
		}
	}
	return name, best
}

// String lists the groups, busiest first.
func (u CPUUsage) String() string {
	groups := make([]string, 0, len(u.ByGroup))
	for g := range u.ByGroup {
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b string) int {
		if u.ByGroup[a] != u.ByGroup[b] {
			if u.ByGroup[a] > u.ByGroup[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	parts := []string{fmt.Sprintf("machine %.0f%% of %d cores (other processes %.0f%% of one core)", 100*u.Machine/float64(u.Cores), u.Cores, 100*u.Others())}
	for _, g := range groups {
		parts = append(parts, fmt.Sprintf("%s %.0f%%", g, 100*u.ByGroup[g]))
	}
	return strings.Join(parts, "; ")
}

// cpuSnapshot is cumulative CPU ticks per group and for the machine.
type cpuSnapshot struct {
	at                 time.Time
	byGroup            map[string]uint64
	machineBusy, ticks uint64
}

// CPUWatch measures CPU use per group of processes between Start and Stop.
// Processes that exit in between lose their ticks; the groups measured
// here (bench, DynamoDB Local, moto, sandboxes) live for the whole interval.
type CPUWatch struct {
	classify Classifier
	start    cpuSnapshot
}

// WatchCPU takes the starting snapshot.
func WatchCPU(classify Classifier) (*CPUWatch, error) {
	s, err := snapshotCPU(classify)
	if err != nil {
		return nil, err
	}
	return &CPUWatch{classify: classify, start: s}, nil
}

// Stop returns the usage since WatchCPU.
func (w *CPUWatch) Stop() (CPUUsage, error) {
	end, err := snapshotCPU(w.classify)
	if err != nil {
		return CPUUsage{}, err
	}
	elapsed := end.at.Sub(w.start.at)
	u := CPUUsage{Elapsed: elapsed, ByGroup: map[string]float64{}, Cores: runtime.NumCPU()}
	secs := elapsed.Seconds()
	for g, t := range end.byGroup {
		u.ByGroup[g] = float64(t-min(t, w.start.byGroup[g])) / userHZ / secs
	}
	if d := end.ticks - w.start.ticks; d > 0 {
		u.Machine = float64(u.Cores) * float64(end.machineBusy-w.start.machineBusy) / float64(d)
	}
	return u, nil
}

func snapshotCPU(classify Classifier) (cpuSnapshot, error) {
	s := cpuSnapshot{at: time.Now(), byGroup: map[string]uint64{}}
	busy, total, err := machineTicks()
	if err != nil {
		return s, err
	}
	s.machineBusy, s.ticks = busy, total
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return s, fmt.Errorf("list /proc: %w", err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // gone, or not ours to read
		}
		group := classify(pid, exe, strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00"))
		if group == "" {
			continue
		}
		t, err := ProcessTicks(pid)
		if err != nil {
			continue
		}
		s.byGroup[group] += t
	}
	return s, nil
}

// ProcessTicks is a process's user+system CPU time in USER_HZ ticks.
func ProcessTicks(pid int) (uint64, error) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may contain spaces; fields resume after ')'.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(raw[i+1:]))
	// After the name: state(3) ... utime(14) stime(15), i.e. f[11], f[12].
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime/stime", pid)
	}
	return u + st, nil
}

// machineTicks reads the aggregate line of /proc/stat: busy excludes idle
// and iowait.
func machineTicks() (busy, total uint64, err error) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("read /proc/stat: %w", err)
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	for i, v := range f[1:] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: %w", err)
		}
		// Fields 9 and 10 (guest, guest_nice) are already in user and nice.
		if i >= 8 {
			break
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total, nil
}

// findPIDs lists the processes whose environment contains entry (e.g. the
// AWS_LAMBDA_RUNTIME_API address of one sandbox); only our own children
// are readable, which is all we look for.
func findPIDs(entry string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(raw), "\x00") {
			if kv == entry {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}
