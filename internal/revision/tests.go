package revision

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/gotest"
)

// TestSpec is what a build of go test benchmarks selects and how their
// listing runs.
type TestSpec struct {
	Bench   string        // go test -bench's pattern ("" selects every benchmark)
	Procs   int           // -test.cpu of every benchmark
	Timeout time.Duration // bound of each listing process
}

// TestPlan is the testing.B benchmarks of Go packages built into test
// binaries: the binaries, the cases found in them, and what could not be
// built or listed.
type TestPlan struct {
	Dir    string // the module they are built from
	Bins   engine.TestBinaries
	Cases  []engine.Case
	Notes  []string // for the results' header too
	Broken []string // packages that did not build: the run fails
	// Names lists every top-level benchmark found per package, selected
	// or not; Leaves the selected benchmarks to run.
	Names, Leaves map[string][]string
	// Skipped says, for each selected benchmark that skipped itself, why
	// (also among Notes).
	Skipped []string

	spec TestSpec
	pat  *gotest.Pattern
	pkgs map[string]gotest.Package
	say  func(string, ...any)
}

func emptyPlan() *TestPlan {
	return &TestPlan{Leaves: map[string][]string{}, pkgs: map[string]gotest.Package{}, Bins: engine.TestBinaries{}}
}

// BuildPackages resolves the package patterns from dir, builds each
// package's test binary once into work (named after prefix) and lists its
// benchmarks. A package that does not build is told through say, noted,
// and left out (in Broken); only bad patterns are an error.
func BuildPackages(ctx context.Context, dir, work, prefix string, spec TestSpec, patterns []string, say func(string, ...any)) (*TestPlan, error) {
	pat, err := gotest.Split(spec.Bench)
	if err != nil {
		return nil, &UsageError{err}
	}
	pkgs, err := gotest.Packages(ctx, dir, patterns)
	if err != nil {
		return nil, &UsageError{err}
	}
	tp := &TestPlan{Dir: dir, spec: spec, pat: pat, say: say,
		Bins: engine.TestBinaries{}, Names: map[string][]string{}, pkgs: map[string]gotest.Package{}, Leaves: map[string][]string{}}
	var noTests []string
	for i, p := range pkgs {
		if len(p.TestFiles) == 0 {
			noTests = append(noTests, p.ImportPath)
			continue
		}
		tp.pkgs[p.ImportPath] = p
		bin := filepath.Join(work, fmt.Sprintf("%s%03d-%s.test", prefix, i, filepath.Base(p.ImportPath)))
		if err := tp.build(ctx, p, bin, ""); err != nil {
			tp.tell("FAILED %v", err)
			tp.Broken = append(tp.Broken, p.ImportPath)
			tp.Notes = append(tp.Notes, fmt.Sprintf("%s does not build: its benchmarks were not run", p.ImportPath))
		}
	}
	if len(noTests) > 0 {
		tp.Notes = append(tp.Notes, "no test files, so no benchmarks: "+strings.Join(noTests, ", "))
	}
	tp.Cases = tp.allCases()
	return tp, nil
}

func (tp *TestPlan) tell(format string, args ...any) {
	if tp.say != nil {
		tp.say(format, args...)
	}
}

// build builds p's test binary into bin (with overlay, when set) and
// lists its benchmarks, replacing what tp had of p.
func (tp *TestPlan) build(ctx context.Context, p gotest.Package, bin, overlay string) error {
	tp.tell("building the test binary of %s", p.ImportPath)
	if err := gotest.Build(ctx, tp.Dir, p, bin, overlay); err != nil {
		return err
	}
	l, err := gotest.Benchmarks(ctx, bin, p.Dir, tp.pat, tp.spec.Procs, tp.spec.Timeout)
	if err != nil {
		return err
	}
	tp.Bins[p.ImportPath] = engine.TestBinary{Path: bin, Dir: p.Dir}
	tp.Names[p.ImportPath] = l.Top
	if len(l.Top) == 0 {
		tp.Notes = append(tp.Notes, p.ImportPath+": its tests have no benchmarks")
	}
	tp.Leaves[p.ImportPath] = l.Names
	for _, n := range l.Notes {
		tp.Notes = append(tp.Notes, p.ImportPath+": "+n)
	}
	for _, name := range slices.Sorted(maps.Keys(l.Skipped)) {
		skip := fmt.Sprintf("%s: %s skipped itself (b.Skip): %s", p.ImportPath, name, l.Skipped[name])
		tp.Skipped = append(tp.Skipped, skip)
		tp.Notes = append(tp.Notes, skip)
	}
	return nil
}

// allCases are the cases of every listed package, in the packages' order.
func (tp *TestPlan) allCases() []engine.Case {
	var out []engine.Case
	for _, pkg := range slices.Sorted(maps.Keys(tp.Leaves)) {
		for _, name := range tp.Leaves[pkg] {
			out = append(out, engine.Case{Test: &engine.GoTest{Pkg: pkg, Name: name, Procs: tp.spec.Procs}})
		}
	}
	return out
}
