package bench

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

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

// cpuSnapshot is cumulative CPU seconds per group and for the machine.
type cpuSnapshot struct {
	at                 time.Time
	byGroup            map[string]float64
	machineBusy, total float64
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
		u.ByGroup[g] = max(0, t-w.start.byGroup[g]) / secs
	}
	if d := end.total - w.start.total; d > 0 {
		u.Machine = float64(u.Cores) * (end.machineBusy - w.start.machineBusy) / d
	}
	return u, nil
}

func snapshotCPU(classify Classifier) (cpuSnapshot, error) {
	s := cpuSnapshot{at: time.Now(), byGroup: map[string]float64{}}
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return s, err
	}
	st, err := fs.Stat()
	if err != nil {
		return s, fmt.Errorf("read /proc/stat: %w", err)
	}
	// Busy leaves out idle and iowait; guest time is already in user.
	c := st.CPUTotal
	s.machineBusy = c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal
	s.total = s.machineBusy + c.Idle + c.Iowait
	procs, err := fs.AllProcs()
	if err != nil {
		return s, fmt.Errorf("list /proc: %w", err)
	}
	for _, p := range procs {
		cmdline, err := p.CmdLine()
		if err != nil {
			continue // gone, or not ours to read
		}
		exe, _ := p.Executable()
		group := classify(p.PID, exe, cmdline)
		if group == "" {
			continue
		}
		if ps, err := p.Stat(); err == nil {
			s.byGroup[group] += ps.CPUTime()
		}
	}
	return s, nil
}

// sandboxProcess finds the function process started for the Runtime API at
// addr (its AWS_LAMBDA_RUNTIME_API); only our own children's environments
// are readable, which is all we look for.
func sandboxProcess(addr string) (procfs.Proc, error) {
	procs, err := procfs.AllProcs()
	if err != nil {
		return procfs.Proc{}, err
	}
	var found []procfs.Proc
	for _, p := range procs {
		if env, err := p.Environ(); err == nil && slices.Contains(env, "AWS_LAMBDA_RUNTIME_API="+addr) {
			found = append(found, p)
		}
	}
	if len(found) != 1 {
		return procfs.Proc{}, fmt.Errorf("found %d processes for the sandbox at %s, want 1", len(found), addr)
	}
	return found[0], nil
}

// cpuSeconds is a process's user+system CPU time so far.
func cpuSeconds(p procfs.Proc) (float64, error) {
	st, err := p.Stat()
	if err != nil {
		return 0, err
	}
	return st.CPUTime(), nil
}
