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

// SizeGoalMB is the goal for one stripped arm64 bootstrap, in decimal
// megabytes (10^6 bytes), the unit the report uses throughout.
const SizeGoalMB = 12

// lambdaGOARCH is what template.yaml's Globals deploy to.
const lambdaGOARCH = "arm64"

// helloWorldName and helloWorldPkg are the baseline function in both reports.
const (
	helloWorldName = "hello-world"
	helloWorldPkg  = "local/bench/hello"
)

// SizeReport lists each function's stripped linux/arm64 bootstrap.
type SizeReport struct {
	GOARCH      string
	GoalMB      float64
	Functions   []BinarySize // template order
	Hello       BinarySize   // reference only; not held to the goal
	Largest     BinarySize
	AllMeetGoal bool
}

// BinarySize is one built bootstrap.
type BinarySize struct {
	Name      string // logical ID, or "hello-world"
	Bytes     int64
	MB        float64 // decimal
	MeetsGoal bool
}

// BinarySizes builds every function of template.yaml (and the hello-world
// baseline) exactly as the Makefile's build target does and measures them.
func BinarySizes(ctx context.Context, o Options) (*SizeReport, error) {
	began := time.Now()
	targets, err := bootstrapTargets(o.Root)
	if err != nil {
		return nil, err
	}
	progress(o.Log, "sizes: building %d bootstraps for linux/%s (-trimpath -tags lambda.norpc -ldflags='-s -w')", len(targets), lambdaGOARCH)
	buildCtx, cancel := context.WithTimeout(ctx, coldBuildTimeout)
	defer cancel()
	bins, err := buildBootstraps(buildCtx, o.Root, filepath.Join(o.WorkDir, "sizes", lambdaGOARCH), lambdaGOARCH, targets)
	if err != nil {
		return nil, err
	}
	progress(o.Log, "sizes: built in %s", time.Since(began).Round(100*time.Millisecond))
	r := &SizeReport{GOARCH: lambdaGOARCH, GoalMB: SizeGoalMB, AllMeetGoal: true}
	for _, t := range targets {
		fi, err := os.Stat(bins[t.name])
		if err != nil {
			return nil, fmt.Errorf("sizes: %s: %w", t.name, err)
		}
		mb := float64(fi.Size()) / 1e6
		b := BinarySize{Name: t.name, Bytes: fi.Size(), MB: mb, MeetsGoal: mb <= SizeGoalMB}
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

// bootstrapTarget is one package to build into <dir>/bootstrap.
type bootstrapTarget struct {
	name string // logical ID or helloWorldName
	pkg  string // relative to the repo root
	dir  string // output folder name
}

// bootstrapTargets lists template.yaml's functions in template order, then the
// baseline, so a function added to the template is measured without edits.
func bootstrapTargets(root string) ([]bootstrapTarget, error) {
	t, err := stack.LoadTemplate(root)
	if err != nil {
		return nil, fmt.Errorf("reading template.yaml: %w", err)
	}
	ids := t.LogicalIDs(template.TypeServerlessFunction)
	if len(ids) == 0 {
		return nil, fmt.Errorf("template.yaml in %s declares no AWS::Serverless::Function", root)
	}
	var out []bootstrapTarget
	for _, id := range ids {
		dir := stack.FunctionDir(id)
		out = append(out, bootstrapTarget{name: id, pkg: "functions/" + dir, dir: dir})
	}
	return append(out, bootstrapTarget{name: helloWorldName, pkg: helloWorldPkg, dir: "hello"}), nil
}

// buildBootstraps compiles targets for linux/goarch with the Makefile's
// flags into outDir/<dir>/bootstrap, keyed by target name.
func buildBootstraps(ctx context.Context, root, outDir, goarch string, targets []bootstrapTarget) (map[string]string, error) {
	pkgs := make([]string, len(targets))
	for i, t := range targets {
		pkgs[i] = t.pkg
	}
	byDir, err := stack.BuildFor(ctx, root, outDir, goarch, pkgs...)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, t := range targets {
		out[t.name] = byDir[t.dir]
	}
	return out, nil
}
