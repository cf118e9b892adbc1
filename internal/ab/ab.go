package ab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/hostcheck"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/profile"
	"github.com/ledgerbench/ledgerbench/internal/revision"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// Options are one A/B comparison's.
type Options struct {
	// Base and Head are the revisions; Head "." is the working tree as
	// it is. AllowDirty measures Head = HEAD over uncommitted changes.
	Base, Head string
	AllowDirty bool
	// Program is the benchmark program's main package ("" = the one the
	// running binary was built from); Packages, instead, are Go package
	// patterns whose test binaries are compared.
	Program  string
	Packages []string
	// Cases are the program's planned cases (ignored for Packages).
	Cases []engine.Case
	// Engine runs the forks: Forks is the number of rounds.
	Engine engine.Options
	// Alpha is the false-discovery rate of the verdicts and MinChange
	// their margin, in percent (compare.ABOptions).
	Alpha, MinChange float64
	// Confirm runs a second A/B (seed+1) when a row regressed, and keeps
	// the regressions it finds too.
	Confirm bool
	// BuildCache keeps the benchmark programs built at commits by tree
	// hash, for later comparisons of the same commits ("" or "off":
	// none; revision.BuildCache says what is never cached).
	BuildCache string
	// Dir is the user's source tree ("" = the current directory); Out
	// the directory of ab.txt, its logs and profiles ("" =
	// results/ab/<UTC stamp>; one that holds results is refused).
	Dir, Out string
	// Host is how to prepare the host.
	Host session.HostOptions
	// Explain says which rows are explained by their functions, from
	// ExplainRounds CPU profiling forks a side (0: DefaultExplainRounds),
	// into Out/explain.
	Explain       Explain
	ExplainRounds int
	// Policy, when set, says which regressions fail the comparison (per
	// benchmark thresholds, expected regressions).
	Policy *Policy
	// Remote, when set, measures the rounds on other machines (a
	// fleet): fixed rounds of benchmark programs.
	Remote Remote
	// Started is when the command began (zero: when Run holds the run
	// lock, or Compare is called): a budgeted comparison's budget
	// (engine.Options.Budgeted) bounds the whole command from then,
	// builds, confirmation and explanation included.
	Started time.Time
}

// Result is what an A/B comparison found.
type Result struct {
	// Tables are ab.txt's rows with their verdicts.
	Tables *compare.Tables
	Revs   []revision.Revision
	// Notes are the builds' (a baseline built with the experiment's
	// benchmark declarations, benchmarks on one side only).
	Notes []string
	// File is ab.txt, in Out.
	File, Out string
	Runs      []*result.Run
	// Host is the host check made before the run.
	Host *hostcheck.Report
	// Engine are the options the run used (CPUs resolved).
	Engine engine.Options
	// Regressions are the time or throughput rows changed for the worse
	// (with Confirm, those found by both runs); Confirmed says a second
	// run was made.
	Regressions []compare.Regression
	Confirmed   bool
	// Waived are the regressions Options.Policy keeps from failing.
	Waived []Waived
	// Failed counts failed forks of both runs; Broken names packages
	// that did not build.
	Failed int
	Broken []string
	// Explained are the rows explained by their functions.
	Explained []Explained
	// Cases name the cases compared; Took is how long the first A/B's
	// measurement took.
	Cases []string
	Took  time.Duration
}

// Check refuses options ab cannot run.
func (o *Options) Check() error {
	if o.Base == "" {
		return session.Input("{Base} is required")
	}
	if o.Program != "" && len(o.Packages) > 0 {
		return session.Input("{Program} names a benchmark program; with package arguments ab builds their test binaries")
	}
	if err := session.CheckVerdicts(o.Alpha, o.MinChange); err != nil {
		return err
	}
	if o.Engine.UntilDecided && o.MinChange == 0 {
		return session.Input("{UntilDecided} with {MinChange} 0: no row can be decided the same (its interval would have to be a point), so every unchanged row would take rounds until the budget is spent; give a margin")
	}
	if err := CheckExplainRounds(o.ExplainRounds); err != nil {
		return err
	}
	if err := o.checkRemote(); err != nil {
		return err
	}
	return CheckProfiles(o.Engine)
}

// CheckProfiles refuses what ab cannot run: no forks, or a profiler other
// than instructions (whose counts the table puts beside the time; the
// other profiles are for run --prof, one revision at a time).
func CheckProfiles(o engine.Options) error {
	if o.Forks == 0 {
		return session.Input("ab needs forks: {Forks} 0 cannot run two binaries")
	}
	for _, k := range o.Profiles {
		if k != profile.Instructions {
			return session.Input("{Profiles} %s is not supported by ab: ab counts instructions ({Profiles} instructions) to set beside the time; profile each revision with run {Profiles}", k)
		}
	}
	return nil
}

// Run compares the two revisions of o in env and decides every row. The
// Result comes back with any error raised after the first run was
// measured: its table can be shown whatever went wrong next.
func Run(ctx context.Context, env *session.Env, o Options) (*Result, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	repo, err := OpenRepo(o.Dir)
	if err != nil {
		return nil, err
	}
	revs, err := ResolvePair(repo, o.Base, o.Head, o.AllowDirty)
	if err != nil {
		return nil, err
	}
	var prog *revision.Program
	if len(o.Packages) == 0 {
		if prog, err = FindProgram(o.Dir, repo, o.Program); err != nil {
			return nil, err
		}
	}
	s, err := session.Prepare(ctx, env, o.Host, &o.Engine)
	if err != nil {
		return nil, err
	}
	defer s.Release()
	if o.Started.IsZero() {
		o.Started = time.Now() // the run lock is held: waiting for it spent no budget
	}
	if o.Out, err = session.OutDir(o.Out, "ab"); err != nil {
		return nil, err
	}
	env.Say("baseline %s (%s) against experiment %s (%s) → %s", revs[0].Rev, revision.Short(revs[0].Commit), revs[1].Rev, revision.Short(revs[1].Commit), o.Out)
	ws, err := NewWorkspace(s, repo, "ab")
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	ws.Cache = revision.OpenCache(o.BuildCache)
	set, err := BuildPair(ctx, env, ws, o.Dir, revs, prog, nil, o.Cases, o.Engine, o.Packages)
	if err != nil {
		return nil, err
	}
	if len(set.Cases) == 0 && set.HeadCases == 0 && len(set.Broken) == 0 {
		return nil, session.Input("the selection ({Bench} %q) matches no benchmark of the experiment %s", o.Engine.Bench, revision.Short(set.Revs[1].Commit))
	}
	if len(set.Cases) == 0 {
		return nil, session.FailedError{Msg: "no selected benchmark is declared by both revisions"}
	}
	if err := share(env, set, o.Engine); err != nil {
		return nil, err
	}
	return Compare(ctx, s, o, set, repo.Root)
}

// Compare runs an A/B of set's two sides on the prepared session,
// confirms its regressions when asked, and ends with ab's error: the
// run's failures, or the regressions found.
func Compare(ctx context.Context, s *session.Session, o Options, set *Sides, root string) (*Result, error) {
	if o.Started.IsZero() {
		o.Started = time.Now()
	}
	first := o // the first A/B's rounds, within what the budget leaves
	if err := fitBudget(&first.Engine, len(set.Cases), o.left()); err != nil {
		os.Remove(o.Out) // made by session.OutDir; removed only while empty
		return nil, err
	}
	res := &Result{Revs: set.Revs, Notes: set.Notes, Host: s.Check, Engine: o.Engine, Broken: set.Broken, Out: o.Out, File: filepath.Join(o.Out, "ab.txt")}
	began := time.Now()
	ts, r, err := measure(ctx, s, first, set, root, o.Engine.Seed, "ab.txt")
	if ts == nil {
		return nil, err
	}
	res.Took = time.Since(began)
	for _, c := range set.Cases {
		res.Cases = append(res.Cases, c.Name())
	}
	res.Tables, res.Runs, res.Failed = ts, r.Runs, r.Failed
	if err != nil {
		return res, err // the table was decided; ab.txt could not be written
	}
	regs := ts.Regressions()
	second := o
	if len(regs) > 0 && o.Confirm {
		if err := fitBudget(&second.Engine, len(set.Cases), o.left()); err != nil {
			s.Env.Say("%d possible regression(s), not confirmed: %v", len(regs), err)
		} else {
			s.Env.Say("%d possible regression(s); confirming with a second A/B run", len(regs))
			res.Confirmed = true
		}
	}
	if res.Confirmed {
		again, r2, err := measure(ctx, s, second, set, root, o.Engine.Seed+1, "ab-confirm.txt")
		if err != nil {
			return res, err
		}
		res.Failed += r2.Failed
		regs = confirmed(regs, again.Regressions())
	}
	res.Regressions, res.Waived = o.Policy.Apply(regs)
	regs = res.Regressions
	x := Explaining{Mode: o.Explain, Rounds: o.ExplainRounds, Alpha: o.Alpha, Engine: o.Engine, Dir: filepath.Join(o.Out, ExplainDir), Runs: r.Runs}
	if o.Engine.Budgeted() {
		x.Budget = max(o.left(), time.Nanosecond)
	}
	res.Explained = ExplainRows(ctx, s, set, root, ts, x)
	r.Failed = res.Failed
	if err := r.Outcome(set.Broken, o.Out); err != nil {
		return res, err
	}
	if len(regs) > 0 {
		return res, session.FailedError{Msg: fmt.Sprintf("%d significant regression(s) beyond --min-change %g %%", len(regs), o.MinChange)}
	}
	return res, nil
}

// measure runs one A/B of set with seed into file of o.Out and decides it.
func measure(ctx context.Context, s *session.Session, o Options, set *Sides, root string, seed uint64, file string) (*compare.Tables, *session.Recorded, error) {
	eo := o.Engine
	eo.Seed = seed
	path := filepath.Join(o.Out, file)
	var ts *compare.Tables
	co := Verdicts(o.Alpha, o.MinChange, eo.UntilDecided || eo.Detect > 0)
	if o.Remote != nil {
		return measureRemote(ctx, s, o, set, seed, file, co)
	}
	rec := &session.Recording{Options: eo, Cases: set.Cases, Sides: set.Sides, Revs: set.Revs, Notes: set.Notes,
		Dir: root, LogDir: filepath.Join(o.Out, "logs"), ProfileDir: filepath.Join(o.Out, "profiles"),
		Out: session.ResultsFile{Path: path, Put: session.ReplaceFile},
		Before: func(r *session.Recorded) error {
			t, err := compare.BuildData(path, r.Data, co)
			if err != nil {
				return session.FailedError{Msg: err.Error()}
			}
			ts = t
			return nil
		}}
	if eo.UntilDecided {
		rec.Decide = Decide(path, co)
	}
	r, err := s.Record(ctx, rec)
	if err == nil && r.Interrupted != nil {
		err = r.Interrupted
	}
	return ts, r, err
}

// Decide is a Recording's Decide for the results file at path: its rows
// so far decided under co.
func Decide(path string, co compare.Options) func(data []byte) (func(string) bool, error) {
	return func(data []byte) (func(string) bool, error) {
		t, err := compare.BuildData(path, data, co)
		if err != nil {
			return nil, err
		}
		return t.Decided, nil
	}
}

// Verdicts are the options under which ab decides its rows: ab's, at
// significance alpha with the margin minChange in percent, by the
// anytime-valid test when sequential: when rounds were added by a rule
// that looked at them (--until-decided, --detect).
func Verdicts(alpha, minChange float64, sequential bool) compare.Options {
	o := compare.ABOptions(alpha, minChange)
	o.Sequential = sequential
	return o
}

// confirmed keeps the regressions that the second run found too.
func confirmed(regs, again []compare.Regression) []compare.Regression {
	seen := map[string]bool{}
	for _, r := range again {
		seen[r.Unit+" "+r.Benchmark] = true
	}
	var kept []compare.Regression
	for _, r := range regs {
		if seen[r.Unit+" "+r.Benchmark] {
			kept = append(kept, r)
		}
	}
	return kept
}

// Reached counts the cases of an A/B run that added rounds which reached
// what was asked (a detectable change, or an interval's precision).
func Reached(o engine.Options, runs []*result.Run) (reached, cases int) {
	if len(runs) != 2 {
		return 0, 0
	}
	for i := range runs[0].Cases {
		if engine.Precise(o, runs, i) {
			reached++
		}
	}
	return reached, len(runs[0].Cases)
}

// share keeps the engine's shard of the cases both sides run: every host
// of a matrix builds the same revisions, finds the same cases and keeps
// its own share of them.
func share(env *session.Env, set *Sides, o engine.Options) error {
	if o.Shard.Whole() {
		return nil
	}
	all := len(set.Cases)
	cases, err := o.Shard.Of(set.Cases, o)
	if err != nil {
		return session.Input("{Shard} %w", err)
	}
	set.Cases = cases
	env.Say("shard %s: %d of the %d cases both revisions run", o.Shard, len(cases), all)
	return nil
}
