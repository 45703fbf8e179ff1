package docs

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// module is go.mod's module path: the prefix of every import of ours.
const module = "github.com/gamefabric-alloc/allocsvc/"

var (
	// mermaidNode is a node as the diagram declares it: id["shared/…"].
	mermaidNode = regexp.MustCompile(`(\w+)\["([^"]+)"\]`)
	// mermaidEdge is `a --> b & c`: a imports b and c.
	mermaidEdge = regexp.MustCompile(`^\s*(\w+)(?:\["[^"]*"\])?\s*-->\s*(.+)$`)
)

// TestArchitectureDiagramIsTheImports holds docs/architecture.md's package
// diagram to the code: every package under shared/ is a node, and its
// arrows are exactly its imports of other shared/ packages (test files
// left out), so a new import or package fails here until the map shows it.
func TestArchitectureDiagramIsTheImports(t *testing.T) {
	real := sharedImports(t)
	drawn := diagramImports(t, filepath.Join(root, "docs", "architecture.md"))
	for _, pkg := range sortedKeys(real) {
		if _, ok := drawn[pkg]; !ok {
			t.Errorf("docs/architecture.md's diagram has no node for %s", pkg)
		}
	}
	for _, pkg := range sortedKeys(drawn) {
		if _, ok := real[pkg]; !ok {
			t.Errorf("docs/architecture.md's diagram draws %s, which is no package under shared/", pkg)
		}
	}
	for pkg, imports := range real {
		for _, imp := range sortedKeys(imports) {
			if !drawn[pkg][imp] {
				t.Errorf("%s imports %s: add `%s --> %s` to docs/architecture.md's diagram", pkg, imp, nodeID(pkg), nodeID(imp))
			}
		}
		for _, imp := range sortedKeys(drawn[pkg]) {
			if !imports[imp] {
				t.Errorf("docs/architecture.md's diagram says %s imports %s; it does not", pkg, imp)
			}
		}
	}
}

// TestLayering is the rule docs/architecture.md states, checked: the
// kernel imports nothing of ours but apishape, which imports nothing; the domain imports only the kernel, save
// the named exceptions; configuration imports only the kernel; only the
// composition roots import a root.
func TestLayering(t *testing.T) {
	kernel := set("shared/apishape", "shared/gameinstance", "shared/region", "shared/defaults", "shared/logging", "shared/wait")
	domain := map[string]map[string]bool{
		"shared/allocation":   nil,
		"shared/lifecycle":    nil,
		"shared/regionhealth": nil,
		"shared/matchmaking":  set("shared/allocation"),   // it places a match through the allocation's use case
		"shared/eventcatalog": set("shared/regionhealth"), // a region's events are read off its health record
		"shared/pingcache":    set("shared/gamefabric"),   // the exception: it keeps GameFabric's ping types
	}
	isRoot := func(pkg string) bool { return pkg == "shared/app" || strings.HasPrefix(pkg, "shared/app/") }
	for pkg, imports := range sharedImports(t) {
		allowed, isDomain := domain[pkg]
		for imp := range imports {
			switch {
			case kernel[pkg] && (pkg == "shared/apishape" || imp != "shared/apishape"):
				t.Errorf("%s is the kernel and imports %s (only apishape, the public shapes, may be imported there)", pkg, imp)
			case (isDomain || pkg == "shared/config") && !kernel[imp] && !allowed[imp]:
				t.Errorf("%s imports %s, outside the kernel (docs/architecture.md, The layers)", pkg, imp)
			case isRoot(imp) && !isRoot(pkg):
				t.Errorf("%s imports the composition root %s", pkg, imp)
			}
		}
	}
}

// sharedImports reads every package under shared/ (test files and
// testdata left out): its imports of other shared/ packages.
func sharedImports(t *testing.T) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(filepath.Join(root, "shared"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		if out[pkg] == nil {
			out[pkg] = map[string]bool{}
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			if ours, ok := strings.CutPrefix(imp, module); ok && strings.HasPrefix(ours, "shared/") {
				out[pkg][ours] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// diagramImports reads the first mermaid `graph` block of the page: its
// nodes by label (the package's path) and its arrows as imports.
func diagramImports(t *testing.T, page string) map[string]map[string]bool {
	t.Helper()
	f, err := os.Open(page)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	in, done := false, false
	for sc := bufio.NewScanner(f); sc.Scan() && !done; {
		line := sc.Text()
		switch {
		case !in && strings.TrimSpace(line) == "```mermaid":
			in = true
		case in && strings.HasPrefix(strings.TrimSpace(line), "```"):
			if len(lines) > 0 && strings.HasPrefix(strings.TrimSpace(lines[0]), "graph") {
				done = true
			} else {
				in, lines = false, nil
			}
		case in:
			lines = append(lines, line)
		}
	}
	if !done {
		t.Fatalf("%s has no mermaid graph block", page)
	}
	label := map[string]string{}
	for _, line := range lines {
		for _, m := range mermaidNode.FindAllStringSubmatch(line, -1) {
			if prev, ok := label[m[1]]; ok && prev != m[2] {
				t.Fatalf("node %s is both %s and %s", m[1], prev, m[2])
			}
			label[m[1]] = m[2]
		}
	}
	out := map[string]map[string]bool{}
	for _, l := range label {
		out[l] = map[string]bool{}
	}
	for _, line := range lines {
		m := mermaidEdge.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		from, ok := label[m[1]]
		if !ok {
			t.Fatalf("arrow from undeclared node %s: %q", m[1], line)
		}
		for _, target := range strings.Split(m[2], "&") {
			id := strings.TrimSpace(target)
			if i := strings.IndexByte(id, '['); i >= 0 {
				id = id[:i]
			}
			to, ok := label[id]
			if !ok {
				t.Fatalf("arrow to undeclared node %q: %q", id, line)
			}
			out[from][to] = true
		}
	}
	return out
}

// nodeID is the id the diagram gives a package: its last path element.
func nodeID(pkg string) string { return pkg[strings.LastIndexByte(pkg, '/')+1:] }

func set(items ...string) map[string]bool {
	out := map[string]bool{}
	for _, s := range items {
		out[s] = true
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
