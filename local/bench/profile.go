package bench

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// ProfileResult is a CPU profile of the allocate path, in process: the
// function's own handler (the composition root main.go starts), with its
// SDK clients against DynamoDB Local and the stand-in, as the Lambda runtime
// would call it. The stand-in's side (it serves in this process) is left out.
type ProfileResult struct {
	Allocations int
	Path        string        // the profile file, for go tool pprof
	PerCall     time.Duration // CPU of the allocate path per allocation
	Areas       []ProfileShare
	Top         []ProfileShare // functions by inclusive CPU, ours and libraries', not the runtime's
}

// ProfileShare is a part of the allocate path's CPU.
type ProfileShare struct {
	Name    string
	PerCall time.Duration
	Share   float64
}

// profileAreas attributes each sample to the first area, leaf first, whose
// frame it holds: where the CPU is spent, not who asked for it.
var profileAreas = []struct{ name, prefix string }{
	{"JSON (encoding/json)", "encoding/json."},
	{"AWS SDK: DynamoDB attribute values", "github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue."},
	{"AWS SDK: request signing (SigV4)", "github.com/aws/aws-sdk-go-v2/aws/signer/"},
	{"AWS SDK: endpoint rules", "github.com/aws/aws-sdk-go-v2/service/dynamodb/internal/endpoints"},
	{"AWS SDK: serialisation", "github.com/aws/aws-sdk-go-v2/service/dynamodb.aw"},
	{"AWS SDK: other (middleware, retries, clients)", "github.com/aws/"},
	{"smithy-go (middleware stack, transport)", "github.com/aws/smithy-go"},
	{"structured logging (log/slog)", "log/slog."},
	{"HTTP client and server (net/http)", "net/http."},
	{"network and syscalls", "syscall."},
	{"network and syscalls", "internal/poll."},
	{"network and syscalls", "net."},
	{"our code (shared/)", "github.com/gamefabric-alloc/allocsvc/shared/"},
	{"Lambda adapters (aws-lambda-go, api-proxy)", "github.com/aws/aws-lambda-go"},
	{"Lambda adapters (aws-lambda-go, api-proxy)", "github.com/awslabs/"},
	{"garbage collection", "runtime.gc"},
	{"garbage collection", "runtime.mallocgc"},
	{"garbage collection", "runtime.bgsweep"},
	{"garbage collection", "runtime.bgscavenge"},
}

// benchFrames are the bench's own (it drives the handler), not listed.
const benchFrames = "github.com/gamefabric-alloc/allocsvc/local/"

// standInFrame marks the stand-in's server side, which runs in this
// process but is GameFabric's work, not the function's.
const standInFrame = "net/http.(*conn).serve"

// profileWorkers run allocations side by side, like as many warm
// sandboxes, so that enough samples (100 a second) come in a few seconds.
const profileWorkers = 8

// MeasureProfile profiles n fresh allocations through in-process handlers,
// profileWorkers at a time, after a warm-up, and writes the profile to dir.
func MeasureProfile(ctx context.Context, s *Stack, n int, dir string, log io.Writer) (ProfileResult, error) {
	ips := make([]*InProcess, profileWorkers)
	for w := range ips {
		ip, err := NewInProcess(s)
		if err != nil {
			return ProfileResult{}, err
		}
		ips[w] = ip
	}
	run := time.Now().UnixNano()
	// each runs count allocations on every worker; the first error wins.
	each := func(count int, tag string) error {
		errs := make(chan error, len(ips))
		for w, ip := range ips {
			go func() {
				for i := range count {
					status, _, err := ip.Allocate(ctx, fmt.Sprintf("prof-%s-%d-%d-%d", tag, run, w, i), RegionOK)
					if err == nil && status != http.StatusCreated {
						err = fmt.Errorf("status %d", status)
					}
					if err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			}()
		}
		var first error
		for range ips {
			first = cmp.Or(first, <-errs)
		}
		return first
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
	n = perWorker * profileWorkers
	res := ProfileResult{Allocations: n, Path: filepath.Join(dir, "allocate.cpu.pprof")}
	if err := os.WriteFile(res.Path, buf.Bytes(), 0o644); err != nil {
		return res, err
	}
	p, err := profile.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		return res, fmt.Errorf("read the CPU profile: %w", err)
	}
	summarise(&res, p)
	progress(log, "profile: %s of CPU per allocation on the allocate path (%d allocations, %s)", fmtMs(res.PerCall), n, res.Path)
	return res, nil
}

// summarise splits the samples (the stand-in's left out) by area and by
// function.
func summarise(res *ProfileResult, p *profile.Profile) {
	valueIdx := len(p.SampleType) - 1 // cpu nanoseconds
	var total int64
	areas := map[string]int64{}
	funcs := map[string]int64{}
	for _, s := range p.Sample {
		frames := sampleFrames(s)
		if slices.ContainsFunc(frames, func(f string) bool { return f == standInFrame }) {
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
	per := func(v int64) time.Duration { return time.Duration(v / int64(res.Allocations)) }
	res.PerCall = per(total)
	for name, v := range areas {
		res.Areas = append(res.Areas, ProfileShare{Name: name, PerCall: per(v), Share: float64(v) / float64(total)})
	}
	slices.SortFunc(res.Areas, func(a, b ProfileShare) int { return cmp.Compare(b.Share, a.Share) })
	for name, v := range funcs {
		res.Top = append(res.Top, ProfileShare{Name: name, PerCall: per(v), Share: float64(v) / float64(total)})
	}
	slices.SortFunc(res.Top, func(a, b ProfileShare) int {
		return cmp.Or(cmp.Compare(b.Share, a.Share), strings.Compare(a.Name, b.Name))
	})
	res.Top = res.Top[:min(len(res.Top), 20)]
}

// sampleFrames are the sample's function names, leaf first.
func sampleFrames(s *profile.Sample) []string {
	var out []string
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			if line.Function != nil {
				out = append(out, line.Function.Name)
			}
		}
	}
	return out
}

func area(frames []string) string {
	for _, f := range frames {
		for _, a := range profileAreas {
			if strings.HasPrefix(f, a.prefix) {
				return a.name
			}
		}
	}
	return "Go runtime (scheduler, other)"
}
