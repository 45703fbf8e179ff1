package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/procfs"
)

// Classifier names a process's group, "" to ignore it.
type Classifier func(pid int, exe string, cmdline []string) string

// CPUUsage is CPU time used over an interval, in cores.
type CPUUsage struct {
	Cores                       int
	Machine, Busy, Ours, Others float64
	Groups                      []GroupShare
}

// GroupShare is one group's CPU use, in cores.
type GroupShare struct {
	Name  string
	Cores float64
}

type cpuSnapshot struct {
	at                 time.Time
	byGroup            map[string]float64
	machineBusy, total float64
}

// cpuDuring measures CPU use per group of processes while run runs;
// processes that exit meanwhile lose their time.
func cpuDuring(classify Classifier, run func()) (CPUUsage, error) {
	start, err := snapshotCPU(classify)
	if err != nil {
		return CPUUsage{}, err
	}
	run()
	end, err := snapshotCPU(classify)
	if err != nil {
		return CPUUsage{}, err
	}
	secs := end.at.Sub(start.at).Seconds()
	u := CPUUsage{Cores: runtime.NumCPU()}
	for g, t := range end.byGroup {
		share := max(0, t-start.byGroup[g]) / secs
		u.Groups = append(u.Groups, GroupShare{g, share})
		u.Ours += share
	}
	slices.SortFunc(u.Groups, func(a, b GroupShare) int {
		return cmp.Or(cmp.Compare(b.Cores, a.Cores), strings.Compare(a.Name, b.Name))
	})
	if d := end.total - start.total; d > 0 {
		u.Machine = float64(u.Cores) * (end.machineBusy - start.machineBusy) / d
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

// Lambda allots CPU in proportion to memory, one vCPU at 1,769 MB: each
// AllocateFunction sandbox gets that share as a cgroup v1 CFS quota.
const (
	cpuControllerDir = "/sys/fs/cgroup/cpu"
	cfsPeriodUs      = 20_000
	minCFSQuotaUs    = 1_000 // the kernel's floor for cpu.cfs_quota_us
)

var CPUShareSizes = []int{128, 256, 512, 1024, 1769}

// CPUShareGoal is the goal at 128 MB; CPUShareTarget the ratio the
// README's recommended MemorySize must reach.
const (
	CPUShareGoal   = 1.35
	CPUShareTarget = 1.2
)

// cpuShares is one cgroup per confined process, under one of the bench's.
type cpuShares struct {
	root string
	mu   sync.Mutex
	subs []string
	mb   int // 0: not limited
}

func newCPUShares() (*cpuShares, error) {
	if _, err := os.Stat(filepath.Join(cpuControllerDir, "cpu.cfs_quota_us")); err != nil {
		return nil, fmt.Errorf("no cgroup v1 cpu controller at %s (%v)", cpuControllerDir, err)
	}
	root := filepath.Join(cpuControllerDir, "allocsvc-bench-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(root, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create a cpu cgroup (needs root): %w", err)
	}
	return &cpuShares{root: root}, nil
}

func (c *cpuShares) add(pid int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	sub := filepath.Join(c.root, "sandbox-"+strconv.Itoa(len(c.subs)))
	if err := os.Mkdir(sub, 0o755); err != nil {
		return err
	}
	c.subs = append(c.subs, sub)
	if err := limit(sub, c.mb); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(sub, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
}

func (c *cpuShares) set(memoryMB int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mb = memoryMB
	var errs []error
	for _, sub := range c.subs {
		errs = append(errs, limit(sub, memoryMB))
	}
	return errors.Join(errs...)
}

func limit(group string, memoryMB int) error {
	quota := "-1"
	if memoryMB > 0 {
		quota = strconv.Itoa(max(minCFSQuotaUs, cfsPeriodUs*memoryMB/int(prices.MBPerVCPU)))
	}
	if err := os.WriteFile(filepath.Join(group, "cpu.cfs_period_us"), []byte(strconv.Itoa(cfsPeriodUs)), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(group, "cpu.cfs_quota_us"), []byte(quota), 0o644)
}

// throttled sums the confined processes' throttled periods and time
// (cpu.stat): the evidence that the quota bit.
func (c *cpuShares) throttled() (periods int64, d time.Duration, sandboxes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, sub := range c.subs {
		b, _ := os.ReadFile(filepath.Join(sub, "cpu.stat"))
		for line := range strings.Lines(string(b)) {
			k, v, _ := strings.Cut(strings.TrimSpace(line), " ")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "nr_throttled":
				periods += n
			case "throttled_time":
				d += time.Duration(n)
			}
		}
	}
	return periods, d, len(c.subs)
}

// close removes the groups; the kernel refuses while processes are in them.
func (c *cpuShares) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, sub := range slices.Backward(c.subs) {
		errs = append(errs, os.Remove(sub))
	}
	return errors.Join(append(errs, os.Remove(c.root))...)
}

// CPUShareRow is the allocate overhead at one memory size's CPU share.
type CPUShareRow struct {
	MemoryMB           int
	Share              float64 // of one CPU
	Overhead           OverheadResult
	Sandboxes          int
	ThrottledPerCall   float64
	ThrottledTimePerOp time.Duration
}

// CPUShareResult is the overhead by memory size; Recommended is the
// smallest size at CPUShareTarget or better.
type CPUShareResult struct {
	Unavailable string
	Rows        []CPUShareRow
	At128       float64
	Met         bool
	Recommended int
}

// MeasureCPUShare repeats the overhead run at each size's CPU share.
func MeasureCPUShare(ctx context.Context, s *Stack, o OverheadOptions, log io.Writer) (CPUShareResult, error) {
	var res CPUShareResult
	if s.CPU == nil {
		res.Unavailable = s.CPUWhy
		progress(log, "Lambda CPU share: skipped: %s", s.CPUWhy)
		return res, nil
	}
	defer func() { _ = s.CPU.set(0) }()
	for _, mb := range CPUShareSizes {
		if err := s.CPU.set(mb); err != nil {
			return res, fmt.Errorf("CPU share of %d MB: %w", mb, err)
		}
		periods0, time0, _ := s.CPU.throttled()
		ovh, err := MeasureOverhead(ctx, s, o, io.Discard)
		if err != nil {
			return res, fmt.Errorf("overhead at %d MB: %w", mb, err)
		}
		periods1, time1, sandboxes := s.CPU.throttled()
		calls := float64(o.Warmup + ovh.E2E.N)
		row := CPUShareRow{MemoryMB: mb, Share: float64(mb) / prices.MBPerVCPU, Overhead: ovh, Sandboxes: sandboxes,
			ThrottledPerCall: float64(periods1-periods0) / calls, ThrottledTimePerOp: time.Duration(float64(time1-time0) / calls)}
		res.Rows = append(res.Rows, row)
		if mb == 128 {
			res.At128, res.Met = ovh.RatioP50, ovh.RatioP50 <= CPUShareGoal
		}
		if res.Recommended == 0 && ovh.RatioP50 <= CPUShareTarget {
			res.Recommended = mb
		}
		progress(log, "Lambda CPU share %4d MB (%.1f%% of a CPU, %d sandboxes): stack p50 %s ÷ direct %s = %.2f×; %.2f throttled periods, %s waiting per allocation",
			mb, 100*row.Share, sandboxes, fmtMs(ovh.E2E.P50), fmtMs(ovh.Direct.P50), ovh.RatioP50, row.ThrottledPerCall, fmtMs(row.ThrottledTimePerOp))
	}
	return res, nil
}
