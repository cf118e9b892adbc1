package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/profile"
)

// Runner runs planned cases in forked worker processes (or in process
// when Options.Forks is 0) and collects their iterations.
type Runner struct {
	// Executable is the binary re-executed as a child (default: this
	// process's own executable); Args and Env are passed to it.
	Executable string
	Args       []string
	Env        []string
	// LogDir receives each fork's stdout and stderr ("" discards them).
	LogDir string
	// Progress, when set, is told about every fork.
	Progress func(Event)
	// ProfileDir receives the profiles of Options.Profiles, one directory
	// per case named after it.
	ProfileDir string
	// CPUs pins every fork to these CPUs and sets its GOMAXPROCS to their
	// number.
	CPUs []int
	// BeforeFork, when set, runs before every fork (cool-down, idle
	// wait); what it returns is recorded with the case.
	BeforeFork func(c Case, fork int) string
	// Decided, with Options.UntilDecided, says after a round which cases
	// of the runs so far are decided (true at their index): they get no
	// more rounds.
	Decided func(runs []*result.Run) []bool

	qualify bool      // the cases come from several packages: see fileName
	side    string    // the side whose forks this copy runs (logs are named after it)
	round   int       // the profiling round this copy runs (0: the only one)
	pair    *duetPair // the duet this copy's fork is one of
	plant   float64   // Side.Plant of that side
}

// Event reports the progress of a run.
type Event struct {
	Case      Case
	Fork      int // 1-based; 0 for an in-process run
	Done      int // forks finished so far, this one included when End
	Total     int
	End       bool
	Err       error
	Estimated time.Duration // planned length of one fork
	Profile   profile.Kind  // the profiler of a profiling fork
	Side      string        // the side of an A/B run
	// Deadline is when a budgeted run's budget (Options.Budgeted) ends:
	// no round starts that would end after it. Zero otherwise.
	Deadline time.Time
}

// Side is one binary of a run: its name (the toolchain key of an A/B
// run's results) and how its forks are launched.
type Side struct {
	Name   string
	Launch Launcher
	// Cases, when set, are the cases this side runs in place of the run's
	// (one for each, in the same order): a calibration's side B runs each
	// case with a known change. Its results are named after them.
	Cases []Case
	// Plant is a known slowdown this side's forks measure (see
	// harness.Plan.Plant): a calibration's side B with --plant. 0 for
	// every comparison of real code.
	Plant float64
}

// caseOf is the case side s runs for the run's case i.
func caseOf(sides []Side, cases []Case, s, i int) Case {
	if sides[s].Cases != nil {
		return sides[s].Cases[i]
	}
	return cases[i]
}

// Run runs every case of o's plan: forks in rounds in which the cases run
// in a seeded random order, so drifts of the machine spread over all
// cases. Fork failures are recorded in the results and the run goes on; an
// error is returned only when the run could not start or was interrupted
// (the results so far are returned with it).
func (rn *Runner) Run(ctx context.Context, o Options, cases []Case) (*result.Run, error) {
	var launch Launcher = Program{}
	if o.Forks == 0 {
		launch = InProcess{}
	}
	runs, err := rn.RunSides(ctx, o, cases, []Side{{Launch: launch}})
	if runs == nil {
		return nil, err
	}
	return runs[0], err
}

// RunSides runs every case on every side, one Run per side, interleaved:
// in each round the cases are shuffled, and each case's forks run on the
// sides in a seeded order (A B or B A), so drifts of the machine spread
// evenly over the sides. The order is recorded in the first Run's Order.
func (rn *Runner) RunSides(ctx context.Context, o Options, cases []Case, sides []Side) ([]*result.Run, error) {
	if err := rn.check(o, cases, sides); err != nil {
		return nil, err
	}
	r := &sideRun{rn: rn, o: o, cases: cases, sides: sides, runs: newRuns(o, cases, sides),
		rounds: max(o.Forks, 1), rng: rand.New(rand.NewPCG(o.Seed, 0x6f72646572)), // "order"
		start: time.Now(), closed: make([]bool, len(cases))}
	r.srn = rn.sideRunners(sides)
	for s := range sides {
		r.launch = append(r.launch, sides[s].Launch)
	}
	r.total = (r.rounds + o.profileForks()) * len(cases) * len(sides)
	r.forkTime = forkTime(o)
	err := r.measured(ctx)
	if err == nil {
		err = rn.profiles(ctx, o, cases, sides, r.srn, r.runs, &r.done, r.total, r.forkTime)
	}
	for _, run := range r.runs {
		run.End = time.Now()
	}
	if err != nil {
		return r.runs, err
	}
	// A signal during the last fork (or, in process, the last trial, which
	// no signal stops) ends the run as interrupted too.
	return r.runs, ctx.Err()
}

// sideRun is one RunSides: its sides' copies of the Runner, their results,
// and how far the run has got.
type sideRun struct {
	rn       *Runner
	o        Options
	cases    []Case
	sides    []Side
	srn      []*Runner // a copy per side, named after it
	launch   []Launcher
	runs     []*result.Run
	rounds   int // the rounds every case runs; more are added by more
	rng      *rand.Rand
	start    time.Time
	closed   []bool // cases that get no more rounds (precise, or failed)
	done     int    // forks run so far, of total
	total    int
	forkTime time.Duration
}

// measured runs the rounds: in each, the open cases in a shuffled order.
func (r *sideRun) measured(ctx context.Context) error {
	for round := 1; ; round++ {
		// A round beyond the first runs only its open cases: they are
		// chosen before the budget is asked whether the round fits.
		if round > r.rounds {
			more, err := r.more(round)
			if err != nil || !more {
				return err
			}
		}
		if round > 1 && !r.fits(round) {
			return nil
		}
		if round > r.rounds {
			r.total += r.open() * len(r.sides)
		}
		for _, i := range r.rng.Perm(len(r.cases)) {
			if r.closed[i] {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if r.o.Duet {
				r.rn.duetFork(ctx, r.o, r.srn, r.launch, r.runs, []Case{caseOf(r.sides, r.cases, 0, i), caseOf(r.sides, r.cases, 1, i)}, i, round,
					Event{Fork: round, Done: r.done, Total: r.total, Estimated: r.forkTime, Deadline: r.deadline()})
				r.done += len(r.sides)
				continue
			}
			if err := r.interleaved(ctx, i, round); err != nil {
				return err
			}
		}
	}
}

// deadline is when the run's budget ends, if it bounds the run.
func (r *sideRun) deadline() time.Time {
	if !r.o.Budgeted() {
		return time.Time{}
	}
	return r.start.Add(r.o.Budget)
}

// fits says whether round can start and end within a budget that bounds
// the run (Options.Budgeted): a round of the open cases, at the time the
// forks so far took (the plan's estimate before any ran), must end by
// the budget. A run whose first rounds do not all fit stops there and
// says how many ran in its runs' BudgetRounds; the first round always
// runs (ab refuses a budget that cannot hold the first rounds' plan).
func (r *sideRun) fits(round int) bool {
	if !r.o.Budgeted() {
		return true
	}
	elapsed := time.Since(r.start)
	perFork := r.forkTime
	if r.done > 0 {
		perFork = elapsed / time.Duration(r.done)
	}
	if elapsed+perFork*time.Duration(r.open()*len(r.sides)) <= r.o.Budget {
		return true
	}
	if round <= r.rounds {
		for _, run := range r.runs {
			run.BudgetRounds = round - 1
		}
	}
	return false
}

// more decides whether round, beyond the rounds every case runs, is run:
// with a precision or a detectable change asked for, for the cases that
// have not reached it, until every case has or the budget is spent. Before
// the first such round it checks the plan of o.Detect.
func (r *sideRun) more(round int) (bool, error) {
	o := r.o
	if round == r.rounds+1 {
		// Planned before the budget is looked at: a budget the first
		// rounds spent is one the plan cannot keep.
		if err := plan(o, r.cases, r.runs, r.rounds, time.Since(r.start)); err != nil {
			return false, err
		}
	}
	until := o.UntilDecided && r.rn.Decided != nil
	if (o.Precision == 0 && o.Detect == 0 && !until) || round > MaxForks || time.Since(r.start) >= o.Budget {
		return false, nil
	}
	var decided []bool
	if until {
		decided = r.rn.Decided(r.runs)
	}
	for i := range r.cases {
		// A case whose fork failed gets no more: its failure is
		// reported, and more forks would spend the budget on it.
		done := failedCase(r.runs, i)
		if until {
			done = done || i < len(decided) && decided[i]
		} else {
			done = done || Precise(o, r.runs, i)
		}
		r.closed[i] = done
	}
	return r.open() > 0, nil
}

// open counts the cases the next round runs.
func (r *sideRun) open() int {
	n := 0
	for _, closed := range r.closed {
		if !closed {
			n++
		}
	}
	return n
}

// interleaved runs fork round of case i on every side, one after the
// other in a seeded order, recorded in the first run's Order.
func (r *sideRun) interleaved(ctx context.Context, i, round int) error {
	order := r.rng.Perm(len(r.sides))
	if len(r.sides) > 1 {
		var names []string
		for _, s := range order {
			names = append(names, r.sides[s].Name)
		}
		r.runs[0].Order = append(r.runs[0].Order, fmt.Sprintf("%d:%s:%s", round, r.cases[i].Name(), strings.Join(names, ",")))
	}
	for _, s := range order {
		if err := ctx.Err(); err != nil {
			return err
		}
		cr, c := r.runs[s].Cases[i], caseOf(r.sides, r.cases, s, i)
		forkNo := round
		if r.runs[s].InProcess {
			forkNo = 0
		}
		ev := Event{Case: c, Fork: forkNo, Done: r.done, Total: r.total, Estimated: r.forkTime, Side: r.sides[s].Name, Deadline: r.deadline()}
		r.srn[s].oneFork(ctx, r.o, r.sides[s], cr, ev)
		r.done++
	}
	return nil
}

// newRuns are the empty results of every side, a case result per case.
func newRuns(o Options, cases []Case, sides []Side) []*result.Run {
	runs := make([]*result.Run, len(sides))
	for s := range sides {
		runs[s] = &result.Run{Config: o.Config(), InProcess: o.Forks == 0, Start: time.Now(), Side: sides[s].Name}
		for i := range cases {
			c := caseOf(sides, cases, s, i)
			runs[s].Cases = append(runs[s].Cases, &result.CaseResult{Case: c.Result(), Mode: o.mode(c), Threads: o.Threads})
		}
	}
	return runs
}

// oneFork runs fork ev.Fork of case ev.Case on side, after the wait of
// BeforeFork, records its failure in cr, and tells Progress before and
// after.
func (rn *Runner) oneFork(ctx context.Context, o Options, side Side, cr *result.CaseResult, ev Event) {
	rn.progress(ev)
	if rn.BeforeFork != nil {
		if note := rn.BeforeFork(ev.Case, ev.Fork); note != "" {
			cr.Notes = append(cr.Notes, fmt.Sprintf("fork %d: %s", ev.Fork, note))
		}
	}
	rn.ended(cr, ev, side.Launch.fork(ctx, rn, o, ev.Case, ev.Fork, cr))
}

// ended records the failure of the fork of ev, if any, in cr and tells
// Progress it ended.
func (rn *Runner) ended(cr *result.CaseResult, ev Event, ferr *result.ForkError) {
	ev.Done, ev.End = ev.Done+1, true
	if ferr != nil {
		ferr.Benchmark, ferr.Fork = cr.Case.Name(), ev.Fork
		cr.Failures = append(cr.Failures, ferr)
		ev.Err = ferr
	}
	rn.progress(ev)
}

// check refuses a run that cannot start, and learns whether the cases'
// files need their package in their names (see fileName).
func (rn *Runner) check(o Options, cases []Case, sides []Side) error {
	if len(cases) == 0 {
		return errors.New("no cases to run")
	}
	if len(o.Profiles) > 0 && rn.ProfileDir == "" {
		return errors.New("profiling needs Runner.ProfileDir")
	}
	if len(sides) > 1 && o.Forks == 0 {
		return errors.New("an A/B run needs forks")
	}
	if o.Duet {
		if err := rn.checkDuet(o, sides); err != nil {
			return err
		}
	}
	for _, s := range sides {
		if s.Launch == nil {
			return fmt.Errorf("side %q has no launcher", s.Name)
		}
		if s.Plant != 0 {
			if _, ok := s.Launch.(TestBinaries); ok {
				return fmt.Errorf("side %q: a planted slowdown needs registered benchmarks (go test benchmarks time themselves)", s.Name)
			}
			if !(s.Plant > 0 && s.Plant <= harness.MaxPlant) {
				return fmt.Errorf("side %q: planted slowdown %g: want more than 0, at most %g", s.Name, s.Plant, harness.MaxPlant)
			}
		}
		if s.Cases != nil && len(s.Cases) != len(cases) {
			return fmt.Errorf("side %q has %d cases of its own for the run's %d", s.Name, len(s.Cases), len(cases))
		}
		sc := cases
		if s.Cases != nil {
			sc = s.Cases
		}
		if err := s.Launch.check(o, sc); err != nil {
			return err
		}
	}
	pkgs := map[string]bool{} // of go test benchmarks, named by package when from several
	for _, c := range cases {
		if c.Test != nil {
			pkgs[c.Test.Pkg] = true
		}
	}
	rn.qualify = len(pkgs) > 1
	return nil
}

// forkTime is the planned length of one fork of o.
func forkTime(o Options) time.Duration {
	return estimate(o.Warmup) + estimate(o.Measure) + 100*time.Millisecond
}

// FirstRounds is the least machine time an A/B run of o takes before it
// can add a round: o.Forks rounds of cases cases on two sides (at once
// in a duet), at the planned length of a fork.
func FirstRounds(o Options, cases int) time.Duration {
	slots := 2
	if o.Duet {
		slots = 1
	}
	return time.Duration(max(o.Forks, 1)*cases*slots) * forkTime(o)
}

// ProfileRounds is the least machine time of o.ProfileRounds profiling
// forks of kind k of cases cases on two sides. A CPU fork sampled by perf
// (o.PerfSampling, where perf can sample) measures at most
// SampledWindow, which perf's sampling stretches by up to a third, and
// then converts its samples.
func ProfileRounds(o Options, k profile.Kind, cases int) time.Duration {
	o.Forks, o.Duet = max(o.ProfileRounds, 1), false
	if ok, _ := profile.SampleStatus(); ok && k == profile.CPU && o.PerfSampling && o.Measure.Ops == 0 {
		w := o.sampled().Measure.Time
		o.Measure = result.IterSpec{Count: 1, Time: w*4/3 + sampledConversion}
	}
	return FirstRounds(o, cases)
}

// sampledConversion is about the time a sampled fork's samples take to
// read (perf script) and write as a profile.
const sampledConversion = 300 * time.Millisecond

func estimate(s result.IterSpec) time.Duration {
	if s.Ops > 0 {
		return 0
	}
	return time.Duration(s.Count) * s.Time
}

func (rn *Runner) progress(e Event) {
	if rn.Progress != nil {
		rn.Progress(e)
	}
}
