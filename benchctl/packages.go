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

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/gotest"
	"github.com/ledgerbench/ledgerbench/internal/profile"
)

// testPlan is a run of the testing.B benchmarks of Go packages: their
// test binaries (in a temporary directory the caller removes), the cases
// found in them, and what could not be built or listed.
type testPlan struct {
	work   string
	bins   map[string]engine.TestBinary
	cases  []engine.Case
	notes  []string // in the results' header too
	broken []string // packages that did not build: the run fails
	// names lists every benchmark found per package, selected or not.
	names map[string][]string
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
func (a *app) planPackages(ctx context.Context, dir string, o engine.Options, patterns []string, overlay string) (*testPlan, error) {
	pat, err := gotest.Split(o.Bench)
	if err != nil {
		return nil, usageError{fmt.Errorf("--bench %w", err)}
	}
	pkgs, err := gotest.Packages(ctx, dir, patterns)
	if err != nil {
		return nil, usageError{err}
	}
	work, err := os.MkdirTemp("", "benchctl-tests-")
	if err != nil {
		return nil, failedError{err.Error()}
	}
	tp := &testPlan{work: work, bins: map[string]engine.TestBinary{}, names: map[string][]string{}}
	procs := testProcs(o)
	var noTests []string
	for i, p := range pkgs {
		if p.TestFiles == 0 {
			noTests = append(noTests, p.ImportPath)
			continue
		}
		bin := filepath.Join(work, fmt.Sprintf("%03d-%s.test", i, filepath.Base(p.ImportPath)))
		a.say("building the test binary of %s", p.ImportPath)
		if err := gotest.Build(ctx, dir, p, bin, overlay); err != nil {
			a.say("FAILED %v", err)
			tp.broken = append(tp.broken, p.ImportPath)
			tp.notes = append(tp.notes, fmt.Sprintf("%s does not build: its benchmarks were not run", p.ImportPath))
			continue
		}
		l, err := gotest.Benchmarks(ctx, bin, p.Dir, pat, procs, o.Timeout)
		if err != nil {
			a.say("FAILED %v", err)
			tp.broken = append(tp.broken, p.ImportPath)
			continue
		}
		tp.bins[p.ImportPath] = engine.TestBinary{Path: bin, Dir: p.Dir}
		tp.names[p.ImportPath] = l.Top
		for _, n := range l.Notes {
			tp.notes = append(tp.notes, p.ImportPath+": "+n)
		}
		for _, name := range slices.Sorted(maps.Keys(l.Skipped)) {
			tp.notes = append(tp.notes, fmt.Sprintf("%s: %s skipped itself (b.Skip): %s", p.ImportPath, name, l.Skipped[name]))
		}
		for _, name := range l.Names {
			tp.cases = append(tp.cases, engine.Case{Test: &engine.GoTest{Pkg: p.ImportPath, Name: name, Procs: procs}})
		}
	}
	if len(noTests) > 0 {
		tp.notes = append(tp.notes, "no test files, so no benchmarks: "+strings.Join(noTests, ", "))
	}
	for _, n := range tp.notes {
		a.say("%s", n)
	}
	if len(tp.cases) == 0 {
		defer os.RemoveAll(work)
		return nil, tp.nothing(o.Bench, patterns)
	}
	return tp, nil
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
	tp, err := a.planPackages(cmd.Context(), a.srcDir(), o, patterns, "")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tp.work)
	return a.doRun(cmd, o, tp.cases, f, s, tp)
}
