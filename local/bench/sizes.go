package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/local/template"
)

const (
	// SizeGoalMB is the goal for one stripped arm64 bootstrap, in 10^6 bytes.
	SizeGoalMB     = 12
	lambdaGOARCH   = "arm64"
	helloWorldName = "hello-world"
)

// SizeReport lists each function's stripped linux/arm64 bootstrap.
type SizeReport struct {
	GOARCH      string
	GoalMB      float64
	Functions   []BinarySize // template order
	Hello       BinarySize
	Largest     BinarySize
	AllMeetGoal bool
}

type BinarySize struct {
	Name      string // logical ID, or "hello-world"
	Bytes     int64
	MB        float64 // decimal
	MeetsGoal bool
}

// BinarySizes builds every function and hello-world as make build does.
func BinarySizes(ctx context.Context, o Options) (*SizeReport, error) {
	targets, bins, err := buildTargets(ctx, o, "sizes", filepath.Join("sizes", lambdaGOARCH), lambdaGOARCH)
	if err != nil {
		return nil, err
	}
	r := &SizeReport{GOARCH: lambdaGOARCH, GoalMB: SizeGoalMB, AllMeetGoal: true}
	for _, t := range targets {
		fi, err := os.Stat(bins[t.name])
		if err != nil {
			return nil, fmt.Errorf("sizes: %s: %w", t.name, err)
		}
		b := BinarySize{Name: t.name, Bytes: fi.Size(), MB: float64(fi.Size()) / 1e6}
		b.MeetsGoal = b.MB <= SizeGoalMB
		if t.name == helloWorldName {
			r.Hello = b
			continue
		}
		r.Functions = append(r.Functions, b)
		r.AllMeetGoal = r.AllMeetGoal && b.MeetsGoal
		if b.Bytes >= r.Largest.Bytes {
			r.Largest = b
		}
	}
	return r, nil
}

type bootstrapTarget struct{ name, pkg, dir string }

// buildTargets builds template.yaml's functions in template order, then
// the baseline, for linux/goarch with the Makefile's flags; bins are keyed
// by target name.
func buildTargets(ctx context.Context, o Options, what, sub, goarch string) (targets []bootstrapTarget, bins map[string]string, err error) {
	t, err := stack.LoadTemplate(o.Root)
	if err != nil {
		return nil, nil, fmt.Errorf("reading template.yaml: %w", err)
	}
	ids := t.LogicalIDs(template.TypeServerlessFunction)
	if len(ids) == 0 {
		return nil, nil, fmt.Errorf("template.yaml in %s declares no AWS::Serverless::Function", o.Root)
	}
	var pkgs []string
	for _, id := range ids {
		targets = append(targets, bootstrapTarget{name: id, pkg: "functions/" + stack.FunctionDir(id), dir: stack.FunctionDir(id)})
	}
	targets = append(targets, bootstrapTarget{name: helloWorldName, pkg: "local/bench/hello", dir: "hello"})
	for _, t := range targets {
		pkgs = append(pkgs, t.pkg)
	}
	progress(o.Log, "%s: building %d bootstraps for linux/%s (-trimpath -tags lambda.norpc -ldflags='-s -w')", what, len(targets), goarch)
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, coldBuildTimeout)
	defer cancel()
	byDir, err := stack.BuildFor(ctx, o.Root, filepath.Join(o.WorkDir, sub), goarch, pkgs...)
	if err != nil {
		return nil, nil, err
	}
	progress(o.Log, "%s: built in %s", what, time.Since(began).Round(100*time.Millisecond))
	bins = map[string]string{}
	for _, t := range targets {
		bins[t.name] = byDir[t.dir]
	}
	return targets, bins, nil
}
