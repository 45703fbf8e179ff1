package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gamefabric-alloc/allocsvc/local/stack"
	"github.com/gamefabric-alloc/allocsvc/local/template"
)

// SizeGoalBytes is the goal for one stripped arm64 bootstrap, in
// decimal megabytes (12 × 10^6 bytes), the unit the report uses throughout.
const SizeGoalBytes = 12_000_000

// lambdaGOARCH is what template.yaml's Globals deploy to.
const lambdaGOARCH = "arm64"

// helloWorldName and helloWorldPkg are the baseline function in both reports.
const (
	helloWorldName = "hello-world"
	helloWorldPkg  = "local/bench/hello"
)

// SizeOptions says where to build the Lambda binaries.
type SizeOptions struct {
	Root    string    // repo root (template.yaml, functions/)
	WorkDir string    // scratch dir; binaries go to WorkDir/arm64/<dir>/bootstrap
	Log     io.Writer // progress lines
}

// SizeReport lists each function's stripped linux/arm64 bootstrap.
type SizeReport struct {
	GoalBytes int64
	Functions []BinarySize // template order
	Hello     BinarySize   // reference only; not held to the goal
	Took      time.Duration
}

// BinarySize is one built bootstrap.
type BinarySize struct {
	Name  string // logical ID, or "hello-world"
	Pkg   string // package path relative to the repo root
	Path  string
	Bytes int64
}

// MB is the size in decimal megabytes.
func (b BinarySize) MB() float64 { return float64(b.Bytes) / 1e6 }

// MeetsGoal reports whether the binary is at most SizeGoalBytes.
func (b BinarySize) MeetsGoal() bool { return b.Bytes <= SizeGoalBytes }

// BinarySizes builds every function of template.yaml (and the hello-world
// baseline) exactly as the Makefile's build target does and measures them.
func BinarySizes(ctx context.Context, o SizeOptions) (*SizeReport, error) {
	began := time.Now()
	root, workDir, err := resolveDirs(o.Root, o.WorkDir)
	if err != nil {
		return nil, fmt.Errorf("sizes: %w", err)
	}
	targets, err := bootstrapTargets(root)
	if err != nil {
		return nil, err
	}
	progress(o.Log, "sizes: building %d bootstraps for linux/%s (-trimpath -tags lambda.norpc -ldflags='-s -w')", len(targets), lambdaGOARCH)
	buildCtx, cancel := context.WithTimeout(ctx, coldBuildTimeout)
	defer cancel()
	bins, err := buildBootstraps(buildCtx, root, filepath.Join(workDir, lambdaGOARCH), lambdaGOARCH, targets)
	if err != nil {
		return nil, err
	}
	progress(o.Log, "sizes: built in %s", time.Since(began).Round(100*time.Millisecond))
	r := &SizeReport{GoalBytes: SizeGoalBytes}
	for _, t := range targets {
		fi, err := os.Stat(bins[t.name])
		if err != nil {
			return nil, fmt.Errorf("sizes: %s: %w", t.name, err)
		}
		b := BinarySize{Name: t.name, Pkg: t.pkg, Path: bins[t.name], Bytes: fi.Size()}
		if t.name == helloWorldName {
			r.Hello = b
		} else {
			r.Functions = append(r.Functions, b)
		}
	}
	r.Took = time.Since(began)
	return r, nil
}

// AllMeetGoal reports whether every function (not the baseline) is in budget.
func (r *SizeReport) AllMeetGoal() bool {
	for _, b := range r.Functions {
		if !b.MeetsGoal() {
			return false
		}
	}
	return true
}

// Markdown is the binary-size section of docs/benchmarks.md.
func (r *SizeReport) Markdown() string {
	var b strings.Builder
	b.WriteString("### Binary size\n\n")
	fmt.Fprintf(&b, "Each function's `bootstrap` built exactly like `make build`: `CGO_ENABLED=0 GOOS=linux GOARCH=%s go build -trimpath -tags lambda.norpc -ldflags='-s -w'`. "+
		"Sizes are uncompressed, in MB of 10^6 bytes. Goal: at most %s MB per function. "+
		"The hello-world row is a minimal aws-lambda-go function built the same way, for reference.\n\n", lambdaGOARCH, sizeMB(r.GoalBytes))
	b.WriteString("| Function | Size (MB) | Bytes | Goal ≤ " + sizeMB(r.GoalBytes) + " MB |\n|---|---:|---:|:---:|\n")
	for _, s := range r.Functions {
		fmt.Fprintf(&b, "| %s | %.2f | %d | %s |\n", s.Name, s.MB(), s.Bytes, csGoalMark(s.MeetsGoal()))
	}
	fmt.Fprintf(&b, "| %s (reference) | %.2f | %d | — |\n", r.Hello.Name, r.Hello.MB(), r.Hello.Bytes)
	return b.String()
}

// Text is a compact table for the terminal.
func (r *SizeReport) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "binary size, stripped linux/%s (MB = 10^6 bytes, goal <= %s MB)\n", lambdaGOARCH, sizeMB(r.GoalBytes))
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "function\tMB\tbytes\tgoal\t")
	for _, s := range r.Functions {
		fmt.Fprintf(w, "%s\t%.2f\t%d\t%s\t\n", s.Name, s.MB(), s.Bytes, csGoalWord(s.MeetsGoal()))
	}
	fmt.Fprintf(w, "%s\t%.2f\t%d\t%s\t\n", r.Hello.Name, r.Hello.MB(), r.Hello.Bytes, "ref")
	_ = w.Flush()
	return b.String()
}

// resolveDirs makes root absolute and anchors a relative workDir under it:
// go build runs in root, so its -o and our os.Stat must agree on the path.
func resolveDirs(root, workDir string) (string, string, error) {
	if root == "" || workDir == "" {
		return "", "", errors.New("Root and WorkDir are required")
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return "", "", fmt.Errorf("resolving Root: %w", err)
	}
	if !filepath.IsAbs(workDir) {
		workDir = filepath.Join(root, workDir)
	}
	return root, workDir, nil
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

func sizeMB(bytes int64) string { return fmt.Sprintf("%g", float64(bytes)/1e6) }

func csGoalMark(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func csGoalWord(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAIL"
}
