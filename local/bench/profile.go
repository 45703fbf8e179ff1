package bench

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"
)

// ProfileResult is a CPU profile of the allocate handler in process, the
// stand-in's side (it serves in this process) left out.
type ProfileResult struct {
	Allocations int
	Path        string        // the profile file, for go tool pprof
	PerCall     time.Duration // CPU of the allocate path per allocation
	Areas, Top  []ProfileShare
}

// ProfileShare is a part of the allocate path's CPU.
type ProfileShare struct {
	Name    string
	PerCall time.Duration
	Share   float64
}

// profileAreas attributes each sample to the first area, leaf first, one
// of whose prefixes a frame has: where the CPU is spent, not who asked.
var profileAreas = []struct {
	name     string
	prefixes []string
}{
	{"JSON (encoding/json)", []string{"encoding/json."}},
	{"AWS SDK: DynamoDB attribute values", []string{"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue."}},
	{"AWS SDK: request signing (SigV4)", []string{"github.com/aws/aws-sdk-go-v2/aws/signer/"}},
	{"AWS SDK: endpoint rules", []string{"github.com/aws/aws-sdk-go-v2/service/dynamodb/internal/endpoints"}},
	{"AWS SDK: serialisation", []string{"github.com/aws/aws-sdk-go-v2/service/dynamodb.aw"}},
	{"AWS SDK: other (middleware, retries, clients)", []string{"github.com/aws/"}},
	{"smithy-go (middleware stack, transport)", []string{"github.com/aws/smithy-go"}},
	{"structured logging (log/slog)", []string{"log/slog."}},
	{"HTTP client and server (net/http)", []string{"net/http."}},
	{"network and syscalls", []string{"syscall.", "internal/poll.", "net."}},
	{"our code (shared/)", []string{"github.com/gamefabric-alloc/allocsvc/shared/"}},
	{"Lambda adapters (aws-lambda-go, api-proxy)", []string{"github.com/aws/aws-lambda-go", "github.com/awslabs/"}},
	{"garbage collection", []string{"runtime.gc", "runtime.mallocgc", "runtime.bgsweep", "runtime.bgscavenge"}},
}

const (
	benchFrames = "github.com/gamefabric-alloc/allocsvc/local/"
	// standInFrame marks the stand-in's server side: GameFabric's work.
	standInFrame = "net/http.(*conn).serve"
	// profileWorkers run side by side like warm sandboxes, so enough samples
	// (100 a second) come in seconds.
	profileWorkers = 8
)

// MeasureProfile profiles n fresh allocations in process after a warm-up
// and writes the profile to dir.
func MeasureProfile(ctx context.Context, s *Stack, n int, dir string, log io.Writer) (ProfileResult, error) {
	ips := make([]*InProcess, profileWorkers)
	for w := range ips {
		var err error
		if ips[w], err = NewInProcess(s, nil); err != nil {
			return ProfileResult{}, err
		}
	}
	run := runID()
	each := func(count int, tag string) error {
		errs := make([]error, len(ips))
		var wg sync.WaitGroup
		for w, ip := range ips {
			wg.Add(1)
			go func() { // not wg.Go: its frame would head the functions' list
				defer wg.Done()
				for i := 0; i < count && errs[w] == nil; i++ {
					resp, _, err := ip.Post(ctx, allocateRequest(fmt.Sprintf("prof-%s-%s-%d-%d", tag, run, w, i), RegionOK))
					if err == nil && resp.StatusCode != http.StatusCreated {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
					errs[w] = err
				}
			}()
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	if err := each(overheadWarmup, "warm"); err != nil {
		return ProfileResult{}, fmt.Errorf("profile warm-up: %w", err)
	}
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		return ProfileResult{}, err
	}
	perWorker := max(n/profileWorkers, 1)
	err := each(perWorker, "run")
	pprof.StopCPUProfile()
	if err != nil {
		return ProfileResult{}, fmt.Errorf("profiled allocation: %w", err)
	}
	res := ProfileResult{Allocations: perWorker * profileWorkers, Path: filepath.Join(dir, "allocate.cpu.pprof")}
	if err := os.WriteFile(res.Path, buf.Bytes(), 0o644); err != nil {
		return res, err
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		return res, fmt.Errorf("read the CPU profile: %w", err)
	}
	summarise(&res, p)
	progress(log, "profile: %s of CPU per allocation on the allocate path (%d allocations, %s)", fmtMs(res.PerCall), res.Allocations, res.Path)
	return res, nil
}

func summarise(res *ProfileResult, p *profile.Profile) {
	valueIdx := len(p.SampleType) - 1 // cpu nanoseconds
	var total int64
	areas, funcs := map[string]int64{}, map[string]int64{}
	for _, s := range p.Sample {
		var frames []string // leaf first
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function != nil {
					frames = append(frames, line.Function.Name)
				}
			}
		}
		if slices.Contains(frames, standInFrame) {
			continue
		}
		v := s.Value[valueIdx]
		total += v
		areas[area(frames)] += v
		seen := map[string]bool{}
		for _, f := range frames {
			if !seen[f] && !strings.HasPrefix(f, "runtime.") && !strings.HasPrefix(f, "internal/") && !strings.HasPrefix(f, benchFrames) {
				seen[f] = true
				funcs[f] += v
			}
		}
	}
	if total == 0 || res.Allocations == 0 {
		return
	}
	shares := func(m map[string]int64) []ProfileShare {
		var out []ProfileShare
		for name, v := range m {
			out = append(out, ProfileShare{Name: name, PerCall: time.Duration(v / int64(res.Allocations)), Share: float64(v) / float64(total)})
		}
		slices.SortFunc(out, func(a, b ProfileShare) int {
			return cmp.Or(cmp.Compare(b.Share, a.Share), strings.Compare(a.Name, b.Name))
		})
		return out
	}
	res.PerCall = time.Duration(total / int64(res.Allocations))
	res.Areas, res.Top = shares(areas), shares(funcs)
	res.Top = res.Top[:min(len(res.Top), 20)]
}

func area(frames []string) string {
	for _, f := range frames {
		for _, a := range profileAreas {
			if slices.ContainsFunc(a.prefixes, func(p string) bool { return strings.HasPrefix(f, p) }) {
				return a.name
			}
		}
	}
	return "Go runtime (scheduler, other)"
}
