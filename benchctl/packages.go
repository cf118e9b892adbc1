package benchctl

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/gotest"
	"github.com/ledgerbench/ledgerbench/internal/profile"
	"github.com/ledgerbench/ledgerbench/internal/revision"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// checkPackageFlags refuses the run flags that mean nothing for go test
// benchmarks, before anything is built.
func checkPackageFlags(cmd *cobra.Command, o engine.Options) error {
	set := cmd.Flags().Changed
	for _, fl := range []string{"suite", "param", "mode"} {
		if set(fl) {
			return usageError(fmt.Errorf("--%s applies to registered benchmarks; go test benchmarks (package arguments) have no suites, parameters or modes (their sub-benchmarks are selected with --bench)", fl))
		}
	}
	if o.Forks == 0 {
		return usageError(errors.New("--forks 0: go test benchmarks run in their test binaries' own processes; give 1 or more"))
	}
	for _, k := range o.Profiles {
		if k == profile.OffCPU || k == profile.Perf {
			return usageError(fmt.Errorf("--prof %s is not available for go test benchmarks (it needs benchctl's own worker process); cpu, block, mutex, allocs and instructions are", k))
		}
	}
	if _, err := gotest.Split(o.Bench); err != nil {
		return usageError(fmt.Errorf("--bench %w", err))
	}
	return nil
}

// planPackages resolves the package patterns from dir, builds each
// package's test binary once into a temporary directory (removed by the
// returned cleanup) and lists its benchmarks. A package that does not
// build is reported and left out (the run fails at its end); a pattern
// that matches nothing, or a selection that finds no benchmark, is an
// error.
func (a *app) planPackages(ctx context.Context, dir string, o engine.Options, patterns []string) (*revision.TestPlan, func(), error) {
	work, err := os.MkdirTemp("", "benchctl-tests-")
	if err != nil {
		return nil, nil, failedError(err.Error())
	}
	cleanup := func() { os.RemoveAll(work) }
	tp, err := revision.BuildPackages(ctx, dir, work, "", session.TestSpec(o), patterns, a.say)
	if err != nil {
		err = revisionError(err)
	} else if len(tp.Cases) == 0 {
		err = nothing(tp, o.Bench, patterns)
	}
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	for _, n := range tp.Notes {
		a.say("%s", n)
	}
	return tp, cleanup, nil
}

// nothing is the error of a plan without cases, listing what exists.
func nothing(tp *revision.TestPlan, bench string, patterns []string) error {
	var found []string
	for _, pkg := range slices.Sorted(maps.Keys(tp.Names)) {
		if len(tp.Names[pkg]) > 0 {
			found = append(found, fmt.Sprintf("%s: %s", pkg, strings.Join(tp.Names[pkg], " ")))
		}
	}
	switch {
	case len(found) == 0 && len(tp.Broken) > 0:
		return failedError(fmt.Sprintf("no package of %s built: %s", strings.Join(patterns, " "), strings.Join(tp.Broken, ", ")))
	case len(found) == 0:
		return usageError(fmt.Errorf("%s: no benchmarks (no func BenchmarkX(b *testing.B) in their _test.go files)", strings.Join(patterns, " ")))
	case bench != "":
		return usageError(fmt.Errorf("--bench %s matches no benchmark that runs; the benchmarks are:\n  %s", bench, strings.Join(found, "\n  ")))
	}
	return failedError("no benchmark to run (every one skipped itself); the benchmarks are:\n  " + strings.Join(found, "\n  "))
}

// runPackages is run with package arguments: the go test benchmarks of
// those packages, measured like registered ones.
func (a *app) runPackages(cmd *cobra.Command, f *runFlags, patterns []string) error {
	o, err := a.packageOptions(cmd, f)
	if err != nil {
		return err
	}
	s, err := a.prepare(cmd.Context(), &o, f)
	if err != nil {
		return err
	}
	defer s.Release()
	tp, cleanup, err := a.planPackages(cmd.Context(), a.srcDir(), o, patterns)
	if err != nil {
		return err
	}
	defer cleanup()
	return a.doRun(cmd, o, tp.Cases, f, s, tp)
}

// packageOptions binds and checks the flags of a run of go test
// benchmarks.
func (a *app) packageOptions(cmd *cobra.Command, f *runFlags) (engine.Options, error) {
	o, err := a.options(cmd, f)
	if err != nil {
		return o, err
	}
	if err := validate(o); err != nil {
		return o, err
	}
	return o, checkPackageFlags(cmd, o)
}

// planOrPackages binds the flags of ab or nightly: planned against the
// registry without arguments, or checked for go test benchmarks with
// package arguments (which are built later, per revision).
func (a *app) planOrPackages(cmd *cobra.Command, f *runFlags, patterns []string) (engine.Options, []engine.Case, error) {
	if len(patterns) == 0 {
		return a.plan(cmd, f)
	}
	o, err := a.packageOptions(cmd, f)
	return o, nil, err
}

// revisionError is err of package revision as the command's error.
func revisionError(err error) error { return session.RevisionError(err) }
