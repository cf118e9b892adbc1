package benchctl

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/gotest"
	"github.com/ledgerbench/ledgerbench/internal/profile"
)

// testPlan is a run of the testing.B benchmarks of Go packages: their
// test binaries (in a temporary directory the caller removes), the cases
// found in them, and what could not be built or listed.
type testPlan struct {
	work, dir string // the binaries' directory; the module they are built from
	pat       *gotest.Pattern
	procs     int
	timeout   time.Duration
	pkgs      map[string]gotest.Package
	bins      map[string]engine.TestBinary
	cases     []engine.Case
	notes     []string // in the results' header too
	broken    []string // packages that did not build: the run fails
	// names lists every top-level benchmark found per package, selected
	// or not; leaves the selected benchmarks to run.
	names, leaves map[string][]string
}

// checkPackageFlags refuses the run flags that mean nothing for go test
// benchmarks, before anything is built.
func checkPackageFlags(cmd *cobra.Command, o engine.Options) error {
	set := cmd.Flags().Changed
	for _, fl := range []string{"suite", "param", "mode"} {
		if set(fl) {
			return usageError{fmt.Errorf("--%s applies to registered benchmarks; go test benchmarks (package arguments) have no suites, parameters or modes (their sub-benchmarks are selected with --bench)", fl)}
		}
	}
	if o.Forks == 0 {
		return usageError{errors.New("--forks 0: go test benchmarks run in their test binaries' own processes; give 1 or more")}
	}
	for _, k := range o.Profiles {
		if k == profile.OffCPU || k == profile.Perf {
			return usageError{fmt.Errorf("--prof %s is not available for go test benchmarks (it needs benchctl's own worker process); cpu, block, mutex, allocs and instructions are", k)}
		}
	}
	if _, err := gotest.Split(o.Bench); err != nil {
		return usageError{fmt.Errorf("--bench %w", err)}
	}
	return nil
}

// testProcs is the -test.cpu of every go test benchmark: --threads, else
// the number of --cpus, else this process's GOMAXPROCS (the test binary's
// own default on this host).
func testProcs(o engine.Options) int {
	switch {
	case o.Threads > 0:
		return o.Threads
	case len(o.CPUs) > 0:
		return len(o.CPUs)
	}
	return runtime.GOMAXPROCS(0)
}

// planPackages resolves the package patterns from dir, builds each
// package's test binary once and lists its benchmarks. A package that does
// not build is reported and left out (the run fails at its end); a
// pattern that matches nothing, or a selection that finds no benchmark, is
// an error.
func (a *app) planPackages(ctx context.Context, dir string, o engine.Options, patterns []string) (*testPlan, error) {
	work, err := os.MkdirTemp("", "benchctl-tests-")
	if err != nil {
		return nil, failedError{err.Error()}
	}
	tp, err := a.buildPackages(ctx, dir, work, "", o, patterns)
	if err == nil && len(tp.cases) == 0 {
		err = tp.nothing(o.Bench, patterns)
	}
	if err != nil {
		os.RemoveAll(work)
		return nil, err
	}
	for _, n := range tp.notes {
		a.say("%s", n)
	}
	return tp, nil
}

// buildPackages resolves the patterns from dir and builds and lists every
// package into work, naming the binaries after prefix. Only bad patterns
// are an error; a package that does not build is in broken.
func (a *app) buildPackages(ctx context.Context, dir, work, prefix string, o engine.Options, patterns []string) (*testPlan, error) {
	pat, err := gotest.Split(o.Bench)
	if err != nil {
		return nil, usageError{fmt.Errorf("--bench %w", err)}
	}
	pkgs, err := gotest.Packages(ctx, dir, patterns)
	if err != nil {
		return nil, usageError{err}
	}
	tp := &testPlan{work: work, dir: dir, pat: pat, procs: testProcs(o), timeout: o.Timeout,
		bins: map[string]engine.TestBinary{}, names: map[string][]string{}, pkgs: map[string]gotest.Package{}, leaves: map[string][]string{}}
	var noTests []string
	for i, p := range pkgs {
		if len(p.TestFiles) == 0 {
			noTests = append(noTests, p.ImportPath)
			continue
		}
		tp.pkgs[p.ImportPath] = p
		bin := filepath.Join(work, fmt.Sprintf("%s%03d-%s.test", prefix, i, filepath.Base(p.ImportPath)))
		if err := a.buildTest(ctx, tp, p, bin, ""); err != nil {
			a.say("FAILED %v", err)
			tp.broken = append(tp.broken, p.ImportPath)
			tp.notes = append(tp.notes, fmt.Sprintf("%s does not build: its benchmarks were not run", p.ImportPath))
		}
	}
	if len(noTests) > 0 {
		tp.notes = append(tp.notes, "no test files, so no benchmarks: "+strings.Join(noTests, ", "))
	}
	tp.cases = tp.allCases()
	return tp, nil
}

// buildTest builds p's test binary into bin (with overlay, when set) and
// lists its benchmarks into tp, replacing what tp had of p.
func (a *app) buildTest(ctx context.Context, tp *testPlan, p gotest.Package, bin, overlay string) error {
	a.say("building the test binary of %s", p.ImportPath)
	if err := gotest.Build(ctx, tp.dir, p, bin, overlay); err != nil {
		return err
	}
	l, err := gotest.Benchmarks(ctx, bin, p.Dir, tp.pat, tp.procs, tp.timeout)
	if err != nil {
		return err
	}
	tp.bins[p.ImportPath] = engine.TestBinary{Path: bin, Dir: p.Dir}
	tp.names[p.ImportPath] = l.Top
	if len(l.Top) == 0 {
		tp.notes = append(tp.notes, p.ImportPath+": its tests have no benchmarks")
	}
	tp.leaves[p.ImportPath] = l.Names
	for _, n := range l.Notes {
		tp.notes = append(tp.notes, p.ImportPath+": "+n)
	}
	for _, name := range slices.Sorted(maps.Keys(l.Skipped)) {
		tp.notes = append(tp.notes, fmt.Sprintf("%s: %s skipped itself (b.Skip): %s", p.ImportPath, name, l.Skipped[name]))
	}
	return nil
}

// allCases are the cases of every listed package, in the packages' order.
func (tp *testPlan) allCases() []engine.Case {
	var out []engine.Case
	for _, pkg := range slices.Sorted(maps.Keys(tp.leaves)) {
		for _, name := range tp.leaves[pkg] {
			out = append(out, engine.Case{Test: &engine.GoTest{Pkg: pkg, Name: name, Procs: tp.procs}})
		}
	}
	return out
}

// nothing is the error of a plan without cases, listing what exists.
func (tp *testPlan) nothing(bench string, patterns []string) error {
	var found []string
	for _, pkg := range slices.Sorted(maps.Keys(tp.names)) {
		if len(tp.names[pkg]) > 0 {
			found = append(found, fmt.Sprintf("%s: %s", pkg, strings.Join(tp.names[pkg], " ")))
		}
	}
	switch {
	case len(found) == 0 && len(tp.broken) > 0:
		return failedError{fmt.Sprintf("no package of %s built: %s", strings.Join(patterns, " "), strings.Join(tp.broken, ", "))}
	case len(found) == 0:
		return usageError{fmt.Errorf("%s: no benchmarks (no func BenchmarkX(b *testing.B) in their _test.go files)", strings.Join(patterns, " "))}
	case bench != "":
		return usageError{fmt.Errorf("--bench %s matches no benchmark that runs; the benchmarks are:\n  %s", bench, strings.Join(found, "\n  "))}
	}
	return failedError{"no benchmark to run (every one skipped itself); the benchmarks are:\n  " + strings.Join(found, "\n  ")}
}

// runPackages is run with package arguments: the go test benchmarks of
// those packages, measured like registered ones.
func (a *app) runPackages(cmd *cobra.Command, f *runFlags, patterns []string) error {
	o, err := a.options(cmd, f)
	if err != nil {
		return err
	}
	if err := checkPackageFlags(cmd, o); err != nil {
		return err
	}
	s, err := a.prepare(&o, f)
	if err != nil {
		return err
	}
	defer s.release()
	tp, err := a.planPackages(cmd.Context(), a.srcDir(), o, patterns)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tp.work)
	return a.doRun(cmd, o, tp.cases, f, s, tp)
}

// planOrPackages binds the flags of ab or nightly: planned against the
// registry without arguments, or checked for go test benchmarks with
// package arguments (which are built later, per revision).
func (a *app) planOrPackages(cmd *cobra.Command, f *runFlags, patterns []string) (engine.Options, []engine.Case, error) {
	if len(patterns) == 0 {
		return a.plan(cmd, f)
	}
	o, err := a.options(cmd, f)
	if err != nil {
		return o, nil, err
	}
	return o, nil, checkPackageFlags(cmd, o)
}
