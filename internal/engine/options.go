package engine

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
	"github.com/ledgerbench/ledgerbench/internal/profile"
)

// Options configure a run. Start from [DefaultOptions] (or [QuickOptions])
// and change fields; a command line binds its flags into it.
type Options struct {
	Suite  string    // suite to run ("all" when empty)
	Bench  string    // regexp on benchmark names (all when empty)
	Params Overrides // parameter values replacing the defaults
	Forks  int       // 0 runs in process, with a warning
	// Warmup and Measure give the iterations. In SingleShot mode the
	// warmup is skipped (a cold start) unless WarmupExplicit is set.
	Warmup         result.IterSpec
	WarmupExplicit bool
	Measure        result.IterSpec
	Mode           result.Mode // "" keeps each benchmark's own mode
	Threads        int         // 0 keeps each benchmark's own goroutine count
	Seed           uint64
	// Timeout is how long a fork may go without reporting, on top of the
	// iteration's own time, before it is killed as hung.
	Timeout time.Duration
	// ProbeTolerance flags iterations whose frequency probe moved more
	// than this fraction.
	ProbeTolerance float64
	// Profiles run in extra forks after the measured ones, one fork per
	// case and profiler; their iterations never enter the results.
	Profiles []profile.Kind
	// ProfileRounds is the number of profiling forks of each profiler,
	// case and side (0 or 1: one). With more, they run in rounds, each
	// case's sides back to back in an order that alternates by round, as
	// the measured forks pair, so a profile of one side pairs with the
	// other side's of the same round (ProfileRun.Round).
	ProfileRounds int
	// NsPerOp are the cases' measured time per op, by name, for a run
	// that measures none (an explanation's profiling forks): a go test
	// profiling fork's b.N then covers its window at that speed.
	NsPerOp map[string]float64
	// PerfSampling takes the cpu profiler's profiles with `perf record`
	// sampling the CPU clock (profile.SamplePeriod) where the host allows
	// it, instead of runtime/pprof: 40 to 100 times the samples in the
	// same window. Such a fork counts its ops (as many as one measurement
	// iteration's time holds at the measured speed, profileN) and keeps
	// the samples inside the worker's counted loop. Where perf cannot
	// sample, the fork is runtime/pprof's and the run says why.
	PerfSampling bool
	// InstructionOps is the op count of the callgrind and perf forks
	// (default 20000).
	InstructionOps int64
	// PerfEvents are the events of the perf profiler (default profile.PerfEvents).
	PerfEvents []string
	// CPUs records the pinning (the Runner applies it).
	CPUs []int
	// Precision, when above 0, keeps adding forks (Forks is then the
	// least number) to each case until the 95 % interval of its forks'
	// mean score is within ±Precision of it (0.01: ±1 %), on every side,
	// or until Budget has passed since the run's start.
	Precision float64
	Budget    time.Duration
	// Detect, when above 0, keeps adding rounds to each case of an A/B
	// run until its comparison could detect a change of Detect (0.02:
	// 2 %) with 80 % power at 5 %, or Budget is spent. After the first
	// Forks rounds it plans: a case whose pairs' spread needs more rounds
	// than Budget leaves ends the run with a *PlanError, unless Anyway.
	Detect float64
	Anyway bool
	// UntilDecided, in an A/B run, looks at every case after each round
	// from the Forks-th (at least verdict.MinSamples) and adds rounds to
	// the cases Runner.Decided says are not decided yet, until every case
	// is or Budget is spent.
	UntilDecided bool
	// Duet runs an A/B run's two sides at the same time, each on half of
	// the CPUs (see RunSides).
	Duet bool
	// Quick plans each parameter's Quick values (a smaller dataset) where
	// Params does not set it.
	Quick bool
	// Shard, when set, runs only that share of the cases (see Shard.Of):
	// each host of a matrix runs its own, and the shares' files compare
	// together.
	Shard Shard
}

// Bounds of the options: beyond them a run would never end (or a
// duration would overflow when added to another), so they are refused.
const (
	MaxForks         = 10_000
	MaxIterations    = 100_000
	MaxIterationTime = time.Hour
	MaxThreads       = 1 << 14
	MaxTimeout       = 24 * time.Hour
)

// DefaultOptions are the defaults: 3 forks, 3 warmup × 1 s and
// 5 measurement × 1 s iterations.
func DefaultOptions() Options {
	return Options{
		Suite:          "all",
		Forks:          3,
		Warmup:         result.IterSpec{Count: 3, Time: time.Second},
		Measure:        result.IterSpec{Count: 5, Time: time.Second},
		Seed:           1,
		Timeout:        10 * time.Minute,
		ProbeTolerance: 0.05,
	}
}

// Budgeted reports whether Budget bounds the run, first rounds included:
// it does when rounds are added toward a goal (Precision, Detect or
// UntilDecided). A round that would end past it is not started.
func (o Options) Budgeted() bool {
	return o.Budget > 0 && (o.Precision > 0 || o.Detect > 0 || o.UntilDecided)
}

// DefaultBudget is the machine time a run that adds rounds (a
// precision, a detectable change, or an A/B's --budget) may spend, unless
// told otherwise.
const DefaultBudget = 10 * time.Minute

// ABRounds is the rounds (forks a side) of an A/B comparison by default:
// each round's two forks are one pair, and 5 pairs give an interval a
// few times the spread of one pair's ratio.
const ABRounds = 5

// DuetRounds is the rounds of a duet A/B comparison by default: a duet
// round runs both forks at once, so twice ABRounds take the machine time
// of ABRounds interleaved rounds. On a 2-vCPU VM at 1 s iterations, 5
// duet rounds found a planted +2 % in 38 of 40 comparisons and 10 in all
// of 40.
const DuetRounds = 2 * ABRounds

// DetectForks is the fewest rounds ab --detect plans from: the fewest the
// anytime-valid test decides on. Its verdicts hold α whenever the rounds
// stop, so the rule of adding rounds until the detectable change is
// reached needs no floor of its own (replayed with the fixed-n test, the
// rule made 7.5 % false positives from 3 rounds and 5.3 % from 5, on 200
// A/A comparisons of four benchmarks at 10 ms iterations).
const DetectForks = verdict.MinSamples

// PrecisionForks is the least forks a run with a precision target starts
// with, before it adds forks: fewer give no interval to stop on.
const PrecisionForks = 3

// ABOptions are the defaults of an A/B comparison: DefaultOptions with
// ABRounds forks a side.
func ABOptions() Options {
	o := DefaultOptions()
	o.Forks = ABRounds
	return o
}

// GoTestWarmup and GoTestMeasure are the iterations of a go test
// benchmark's fork unless told otherwise (package arguments): no warmup
// count and three counts of 500 ms. go test warms up before every count
// (run1, and in a side's first fork the ramp of b.N); the later forks run
// at the b.N the first one found (see testFork), so no count ramps again;
// the median of a fork's three counts is not moved by one slow first
// count; and a go test benchmark pays its setup in proportion to the ops
// it runs (google/btree's Get rebuilds its tree under StopTimer every
// 10,000 ops: 3 s of wall time per second measured), so every count
// beyond what the fork's sample needs is paid for again. Pairs of forks,
// not long counts, are what narrow the change's interval: a fork's
// process-to-process spread (±10 % on btree's Get here) dwarfs a count's.
var (
	GoTestWarmup  = result.IterSpec{Count: 0, Time: 500 * time.Millisecond}
	GoTestMeasure = result.IterSpec{Count: 3, Time: 500 * time.Millisecond}
)

// QuickOptions are the quick defaults: 5 forks, 1 warmup × 100 ms and 3
// measurement × 100 ms iterations, and the parameters' Quick values.
// Five rounds pair into intervals that show the cache suite's large
// changes across its 29 rows at a false-discovery rate of 0.05 on an idle
// 2-CPU VM (19 of 29 rows changed, the seed's InsertAtTail, CatchUp and
// InsertAndEvict among them); three rounds, paired by round, showed none
// (their t interval has 2 degrees of freedom).
func QuickOptions() Options {
	o := DefaultOptions()
	o.Forks = 5
	o.Warmup = result.IterSpec{Count: 1, Time: 100 * time.Millisecond}
	o.Measure = result.IterSpec{Count: 3, Time: 100 * time.Millisecond}
	o.Quick = true
	return o
}

// Validate checks the options on their own (Plan checks names against a
// registry). Errors are *OptionError values.
func (o *Options) Validate() error {
	var errs []error
	bad := func(opt string, v any, format string, args ...any) {
		errs = append(errs, &OptionError{Option: opt, Value: fmt.Sprint(v), Err: fmt.Errorf(format, args...)})
	}
	for _, sp := range []struct {
		opt  string
		spec result.IterSpec
	}{{"Warmup", o.Warmup}, {"Measure", o.Measure}} {
		switch {
		case sp.spec.Count > MaxIterations:
			bad(sp.opt, sp.spec, "at most %d iterations", MaxIterations)
		case sp.spec.Time > MaxIterationTime:
			bad(sp.opt, sp.spec, "an iteration lasts at most %s", MaxIterationTime)
		}
	}
	if o.Warmup.Count < 0 {
		bad("Warmup", o.Warmup, "negative count %d", o.Warmup.Count)
	} else if o.Warmup.Count > 0 {
		if err := o.Warmup.Validate("warmup"); err != nil {
			errs = append(errs, &OptionError{Option: "Warmup", Err: err})
		}
	}
	if err := o.Measure.Validate("measurement"); err != nil {
		errs = append(errs, &OptionError{Option: "Measure", Err: err})
	}
	if o.Measure.Count < 1 {
		bad("Measure", o.Measure, "needs at least one measurement iteration")
	}
	if o.Mode != "" {
		if _, err := result.ParseMode(string(o.Mode)); err != nil {
			errs = append(errs, &OptionError{Option: "Mode", Err: err})
		}
	}
	if o.Timeout <= 0 || o.Timeout > MaxTimeout {
		bad("Timeout", o.Timeout, "must be positive and at most %s", MaxTimeout)
	}
	if o.ProbeTolerance < 0 {
		bad("ProbeTolerance", o.ProbeTolerance, "must not be negative")
	}
	o.validateCounts(bad)
	o.validateAdding(bad)
	if o.ProfileRounds < 0 || o.ProfileRounds > MaxForks {
		bad("ProfileRounds", o.ProfileRounds, "must be between 0 and %d", MaxForks)
	}
	if len(o.Profiles) > 0 && o.Forks == 0 {
		errs = append(errs, &OptionError{Option: "Profiles", Err: errors.New("profilers run in their own forks: they need forks (got 0)")})
	}
	if _, err := o.benchRE(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// validateCounts checks the forks, the goroutines and the shard.
func (o *Options) validateCounts(bad func(opt string, v any, format string, args ...any)) {
	switch {
	case o.Forks < 0:
		bad("Forks", o.Forks, "must be 0 (in process) or more")
	case o.Forks > MaxForks:
		bad("Forks", o.Forks, "at most %d forks per case", MaxForks)
	}
	switch {
	case o.Threads < 0:
		bad("Threads", o.Threads, "must be positive")
	case o.Threads > MaxThreads:
		bad("Threads", o.Threads, "at most %d goroutines", MaxThreads)
	}
	if err := o.Shard.check(); err != nil {
		bad("Shard", o.Shard, "%v", err)
	}
}

// validateAdding checks the options of a run that adds rounds: a
// precision, a detectable change, or rows until decided.
func (o *Options) validateAdding(bad func(opt string, v any, format string, args ...any)) {
	if o.Precision < 0 || o.Precision >= 1 || math.IsNaN(o.Precision) {
		bad("Precision", o.Precision, "must be above 0 and below 100 %%")
	}
	if o.Detect < 0 || o.Detect >= 1 || math.IsNaN(o.Detect) {
		bad("Detect", o.Detect, "must be above 0 and below 100 %%")
	}
	if o.UntilDecided {
		if o.Precision > 0 || o.Detect > 0 {
			bad("UntilDecided", o.UntilDecided, "one goal at a time: not with Precision or Detect")
		}
		if o.Forks < verdict.MinSamples {
			bad("Forks", o.Forks, "deciding round by round starts from at least %d rounds", verdict.MinSamples)
		}
		if o.Budget <= 0 || o.Budget > MaxTimeout {
			bad("Budget", o.Budget, "must be positive and at most %s", MaxTimeout)
		}
	}
	if o.Precision > 0 || o.Detect > 0 {
		if o.Forks < 2 {
			bad("Forks", o.Forks, "a precision needs at least 2 forks to start from (each fork is one sample)")
		}
		if o.Budget <= 0 || o.Budget > MaxTimeout {
			bad("Budget", o.Budget, "must be positive and at most %s", MaxTimeout)
		}
	}
}

func (o *Options) benchRE() (*regexp.Regexp, error) {
	if o.Bench == "" {
		return nil, nil
	}
	re, err := regexp.Compile(o.Bench)
	if err != nil {
		return nil, &OptionError{Option: "Bench", Value: o.Bench, Err: err}
	}
	return re, nil
}

// Plan validates o and expands it against r into the cases to run: the
// one planning step of a command, whose cases every later step takes.
func (o *Options) Plan(r *harness.Registry) ([]Case, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	re, _ := o.benchRE()
	benches, err := Select(r, o.Suite, re)
	if err != nil {
		return nil, err
	}
	return cases(benches, re, o.Params, o.Quick)
}

// Config is what the result files record of o.
func (o *Options) Config() result.Config {
	return result.Config{Forks: o.Forks, Warmup: o.Warmup, WarmupExplicit: o.WarmupExplicit,
		Measure: o.Measure, Seed: o.Seed, Timeout: o.Timeout, CPUs: o.CPUs, Precision: o.Precision, Budget: o.Budget, Duet: o.Duet, Shard: o.shardConfig()}
}

// mode is the mode a case runs in.
func (o *Options) mode(c Case) result.Mode {
	switch {
	case c.Test != nil:
		return result.AverageTime
	case o.Mode != "":
		return o.Mode
	case c.desc != nil:
		return cmp.Or(c.desc.Mode, result.AverageTime)
	case c.Bench.Mode != "":
		return c.Bench.Mode
	}
	return result.AverageTime
}

// warmup is the warmup of a case in mode: none for a single shot (a cold
// start) unless the warmup was asked for.
func (o *Options) warmup(mode result.Mode) result.IterSpec {
	warm := o.Warmup
	if mode == result.SingleShot && !o.WarmupExplicit {
		warm.Count = 0
	}
	return warm
}

// planFor builds the complete fork plan of one case: every default is
// applied here, none in the child.
func (o *Options) planFor(c Case, fork int) *harness.Plan {
	mode := o.mode(c)
	warm := o.warmup(mode)
	tol := o.ProbeTolerance
	if tol == 0 {
		tol = 0.05
	}
	return &harness.Plan{
		Benchmark:      c.id(),
		Params:         c.Params,
		Mode:           mode,
		Threads:        o.Threads,
		Warmup:         warm,
		Measure:        o.Measure,
		Seed:           o.Seed,
		Fork:           fork,
		ProbeTolerance: tol,
		Lockstep:       o.Duet,
	}
}

// profileRounds is the rounds of profiling forks of each profiler: one
// unless ProfileRounds asks for more.
func (o Options) profileRounds() int { return max(o.ProfileRounds, 1) }

// profileForks is the profiling forks of a case on a side: a round of
// each profiler.
func (o Options) profileForks() int { return len(o.Profiles) * o.profileRounds() }
