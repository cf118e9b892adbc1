package engine

import (
	"context"
	"errors"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/profile"
)

// Launcher is how a side's forks run: [Program] re-executes a program
// that calls benchctl.Main, [InProcess] runs each trial in this process,
// [TestBinaries] runs go test benchmarks in their packages' test
// binaries. The runner asks the side's launcher for every fork and every
// profiling fork, and never looks at the kind of a case to decide.
type Launcher interface {
	// check refuses a run the launcher cannot do.
	check(o Options, cases []Case) error
	// fork runs one measured fork of c and records it in cr.
	fork(ctx context.Context, rn *Runner, o Options, c Case, forkNo int, cr *result.CaseResult) *result.ForkError
	// profile runs one profiling fork of kind k; a profiler that cannot
	// run here returns a note instead.
	profile(ctx context.Context, rn *Runner, o Options, k profile.Kind, c Case, cr *result.CaseResult, side string) (result.ProfileRun, string)
}

// Program re-executes a benchmark program for every fork: Executable,
// or, when it is "", the Runner's Executable, else this process's own.
type Program struct{ Executable string }

func (p Program) exe(rn *Runner) string {
	if p.Executable != "" {
		return p.Executable
	}
	return rn.Executable
}

func (p Program) check(o Options, cases []Case) error { return registeredOnly(cases) }

func (p Program) fork(ctx context.Context, rn *Runner, o Options, c Case, forkNo int, cr *result.CaseResult) *result.ForkError {
	return rn.fork(ctx, p.exe(rn), rn.planFor(o, c, forkNo), o.Timeout, cr)
}

func (p Program) profile(ctx context.Context, rn *Runner, o Options, k profile.Kind, c Case, cr *result.CaseResult, side string) (result.ProfileRun, string) {
	return rn.profileFork(ctx, o, k, c, cr, side, p.exe(rn))
}

// planFor is o's plan of fork forkNo of c, with this side's plant.
func (rn *Runner) planFor(o Options, c Case, forkNo int) *harness.Plan {
	p := o.planFor(c, forkNo)
	p.Plant = rn.plant
	return p
}

// InProcess runs every trial inside this process (Options.Forks 0): no
// timeout, and state carries over between benchmarks. Its profiling
// forks are still forks of the Runner's Executable.
type InProcess struct{}

func (InProcess) check(o Options, cases []Case) error {
	for _, c := range cases {
		if c.desc != nil {
			return errors.New("benchmark " + c.Name() + " is known by its description alone: it runs in its program's forks")
		}
	}
	return registeredOnly(cases)
}

func (InProcess) fork(ctx context.Context, rn *Runner, o Options, c Case, forkNo int, cr *result.CaseResult) *result.ForkError {
	return rn.inProcess(c, rn.planFor(o, c, forkNo), cr)
}

func (InProcess) profile(ctx context.Context, rn *Runner, o Options, k profile.Kind, c Case, cr *result.CaseResult, side string) (result.ProfileRun, string) {
	return Program{}.profile(ctx, rn, o, k, c, cr, side)
}

// TestBinaries are a side's go test binaries by package import path: each
// fork runs one benchmark alone in its package's binary.
type TestBinaries map[string]TestBinary

func (t TestBinaries) check(o Options, cases []Case) error {
	if o.Forks == 0 {
		return errors.New("go test benchmarks run in their test binaries' processes: they need forks (got 0)")
	}
	for _, c := range cases {
		if c.Test == nil {
			return errors.New("test binaries run go test benchmarks only, not " + c.Name())
		}
	}
	return nil
}

func (t TestBinaries) fork(ctx context.Context, rn *Runner, o Options, c Case, forkNo int, cr *result.CaseResult) *result.ForkError {
	return rn.testFork(ctx, t, o, c, forkNo, cr)
}

func (t TestBinaries) profile(ctx context.Context, rn *Runner, o Options, k profile.Kind, c Case, cr *result.CaseResult, side string) (result.ProfileRun, string) {
	pr, note := rn.testProfileFork(ctx, o, k, c, cr, side, t)
	if bin, ok := t[c.Test.Pkg]; ok {
		pr.GoVersion = binaryGoVersion(bin.Path)
	}
	return pr, note
}

// registeredOnly refuses go test cases on a side that runs registered
// benchmarks.
func registeredOnly(cases []Case) error {
	for _, c := range cases {
		if c.Test != nil {
			return errors.New("go test benchmark " + c.Name() + " needs its package's test binary")
		}
	}
	return nil
}
