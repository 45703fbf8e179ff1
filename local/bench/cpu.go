package bench

import (
	"cmp"
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
	Cores   int
	Machine float64      // every process on the machine, from /proc/stat
	Busy    float64      // Machine as a share of all cores
	Ours    float64      // every classified group
	Others  float64      // the rest of the machine: work this run does not control
	Groups  []GroupShare // busiest first
}

// GroupShare is one group's CPU use, in cores.
type GroupShare struct {
	Name  string
	Cores float64
}

// cpuSnapshot is cumulative CPU seconds per group and for the machine.
type cpuSnapshot struct {
	at                 time.Time
	byGroup            map[string]float64
	machineBusy, total float64
}

// CPUWatch measures CPU use per group of processes between WatchCPU and
// Stop. Processes that exit in between lose their time; the groups measured
// (bench, DynamoDB Local, moto, sandboxes) live for the whole interval.
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
	secs := end.at.Sub(w.start.at).Seconds()
	u := CPUUsage{Cores: runtime.NumCPU()}
	for g, t := range end.byGroup {
		share := max(0, t-w.start.byGroup[g]) / secs
		u.Groups = append(u.Groups, GroupShare{g, share})
		u.Ours += share
	}
	slices.SortFunc(u.Groups, func(a, b GroupShare) int {
		return cmp.Or(cmp.Compare(b.Cores, a.Cores), strings.Compare(a.Name, b.Name))
	})
	if d := end.total - w.start.total; d > 0 {
		u.Machine = float64(u.Cores) * (end.machineBusy - w.start.machineBusy) / d
	}
	u.Busy = u.Machine / float64(u.Cores)
	u.Others = max(0, u.Machine-u.Ours)
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
