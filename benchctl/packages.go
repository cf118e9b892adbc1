package benchctl

import (
	"context"
	"errors"
	"fmt"

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

// planPackages builds the packages' test binaries and lists their
// benchmarks (see session.PlanPackages).
func (a *app) planPackages(ctx context.Context, dir string, o engine.Options, patterns []string) (*revision.TestPlan, func(), error) {
	return session.PlanPackages(ctx, a.env(), dir, o, patterns)
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
// benchmarks, whose forks measure engine.GoTestMeasure unless the flags
// say otherwise.
func (a *app) packageOptions(cmd *cobra.Command, f *runFlags) (engine.Options, error) {
	o, err := a.options(cmd, f)
	if err != nil {
		return o, err
	}
	set := cmd.Flags().Changed
	if !f.quick && !set("warmup") {
		o.Warmup = engine.GoTestWarmup
	}
	if !f.quick && !set("measure") {
		o.Measure = engine.GoTestMeasure
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
