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

type Classifier func(pid int, exe string, cmdline []string) string

// CPUUsage is CPU time used over an interval, in cores.
type CPUUsage struct {
	Cores                       int
	Machine, Busy, Ours, Others float64
	Groups                      []GroupShare
}

type GroupShare struct {
	Name  string
	Cores float64
}

type cpuSnapshot struct {
	at                 time.Time
	byGroup            map[string]float64
	machineBusy, total float64
}

// CPUWatch measures CPU use per group of processes between WatchCPU and
// Stop; processes that exit in between lose their time.
type CPUWatch struct {
	classify Classifier
	start    cpuSnapshot
}

func WatchCPU(classify Classifier) (*CPUWatch, error) {
	s, err := snapshotCPU(classify)
	return &CPUWatch{classify: classify, start: s}, err
}

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
	u.Busy, u.Others = u.Machine/float64(u.Cores), max(0, u.Machine-u.Ours)
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
		if group := classify(p.PID, exe, cmdline); group != "" {
			if ps, err := p.Stat(); err == nil {
				s.byGroup[group] += ps.CPUTime()
			}
		}
	}
	return s, nil
}

// sandboxProcess finds the process started for the Runtime API at addr;
// only our children's environments are readable, all we look for.
func sandboxProcess(addr string) (procfs.Proc, error) {
	procs, err := procfs.AllProcs()
	if err != nil {
		return procfs.Proc{}, err
	}
	found := slices.DeleteFunc(procs, func(p procfs.Proc) bool {
		env, err := p.Environ()
		return err != nil || !slices.Contains(env, "AWS_LAMBDA_RUNTIME_API="+addr)
	})
	if len(found) != 1 {
		return procfs.Proc{}, fmt.Errorf("found %d processes for the sandbox at %s, want 1", len(found), addr)
	}
	return found[0], nil
}
