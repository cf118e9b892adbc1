package session

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/revision"
)

// PlanPackages resolves the package patterns from dir, builds each
// package's test binary once into a temporary directory (removed by the
// returned cleanup) and lists its benchmarks. A package that does not
// build is reported and left out (the run fails at its end); a pattern
// that matches nothing, or a selection that finds no benchmark, is an
// error.
func PlanPackages(ctx context.Context, env *Env, dir string, o engine.Options, patterns []string) (*revision.TestPlan, func(), error) {
	work, err := os.MkdirTemp("", "benchctl-tests-")
	if err != nil {
		return nil, nil, FailedError{Msg: err.Error()}
	}
	cleanup := func() { os.RemoveAll(work) }
	tp, err := revision.BuildPackages(ctx, dir, work, "", TestSpec(o), patterns, env.Say)
	if err != nil {
		err = RevisionError(err)
	} else if len(tp.Cases) == 0 {
		err = nothing(tp, o.Bench, patterns)
	}
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	for _, n := range tp.Notes {
		env.Say("%s", n)
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
		return FailedError{Msg: fmt.Sprintf("no package of %s built: %s", strings.Join(patterns, " "), strings.Join(tp.Broken, ", "))}
	case len(found) == 0:
		return UsageError{fmt.Errorf("%s: no benchmarks (no func BenchmarkX(b *testing.B) in their _test.go files)", strings.Join(patterns, " "))}
	case bench != "":
		if len(tp.Skipped) > 0 {
			return Input("{Bench} %s matches no benchmark that runs:\n  %s\nthe benchmarks are:\n  %s", bench, strings.Join(tp.Skipped, "\n  "), strings.Join(found, "\n  "))
		}
		return Input("{Bench} %s matches no benchmark that runs; the benchmarks are:\n  %s", bench, strings.Join(found, "\n  "))
	}
	return FailedError{Msg: "no benchmark to run (every one skipped itself); the benchmarks are:\n  " + strings.Join(found, "\n  ")}
}
