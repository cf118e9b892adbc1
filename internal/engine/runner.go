package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/fork"
	"github.com/ledgerbench/ledgerbench/internal/measure"
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

	qualify bool      // the cases come from several packages: see fileName
	side    string    // the side whose forks this copy runs (logs are named after it)
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
	// measure.Plan.Plant): a calibration's side B with --plant. 0 for
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
	for s := range sides {
		c := *rn
		c.side, c.plant = sides[s].Name, sides[s].Plant
		r.srn, r.launch = append(r.srn, &c), append(r.launch, sides[s].Launch)
	}
	r.total = (r.rounds + len(o.Profiles)) * len(cases) * len(sides)
	r.forkTime = estimate(o.Warmup) + estimate(o.Measure) + 100*time.Millisecond
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
		if round > r.rounds {
			more, err := r.more(round)
			if err != nil || !more {
				return err
			}
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
					Event{Fork: round, Done: r.done, Total: r.total, Estimated: r.forkTime})
				r.done += len(r.sides)
				continue
			}
			if err := r.interleaved(ctx, i, round); err != nil {
				return err
			}
		}
	}
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
	if (o.Precision == 0 && o.Detect == 0) || round > MaxForks || time.Since(r.start) >= o.Budget {
		return false, nil
	}
	open := 0
	for i := range r.cases {
		// A case whose fork failed gets no more: its failure is
		// reported, and more forks would spend the budget on it.
		if r.closed[i] = Precise(o, r.runs, i) || failedCase(r.runs, i); !r.closed[i] {
			open++
		}
	}
	r.total += open * len(r.sides)
	return open > 0, nil
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
		ev := Event{Case: c, Fork: forkNo, Done: r.done, Total: r.total, Estimated: r.forkTime, Side: r.sides[s].Name}
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
			if !(s.Plant > 0 && s.Plant <= measure.MaxPlant) {
				return fmt.Errorf("side %q: planted slowdown %g: want more than 0, at most %g", s.Name, s.Plant, measure.MaxPlant)
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

// profiles runs the profiling forks of o.Profiles after the measured
// ones, one per kind, side and case; done counts the forks run of total.
// It stops at ctx's end and returns its error.
func (rn *Runner) profiles(ctx context.Context, o Options, cases []Case, sides []Side, srn []*Runner, runs []*result.Run, done *int, total int, forkTime time.Duration) error {
	for _, k := range o.Profiles {
		for s := range sides {
			for i, cr := range runs[s].Cases {
				c := caseOf(sides, cases, s, i)
				if err := ctx.Err(); err != nil {
					return err
				}
				rn.progress(Event{Case: c, Fork: 1, Done: *done, Total: total, Estimated: forkTime, Profile: k, Side: sides[s].Name})
				pr, note := sides[s].Launch.profile(ctx, srn[s], o, k, c, cr, sides[s].Name)
				if note != "" {
					runs[s].ProfileNotes = append(runs[s].ProfileNotes, note)
					*done += len(runs[s].Cases)
					break // the profiler cannot run here: skip it for every case
				}
				cr.Profiles = append(cr.Profiles, pr)
				*done++
				rn.progress(Event{Case: c, Fork: 1, Done: *done, Total: total, End: true, Err: pr.Err, Estimated: forkTime, Profile: k, Side: sides[s].Name})
			}
		}
	}
	return nil
}

// failedCase reports whether a fork of case i failed on any side.
func failedCase(runs []*result.Run, i int) bool {
	for _, r := range runs {
		if len(r.Cases[i].Failures) > 0 {
			return true
		}
	}
	return false
}

// profileFork runs one profiling fork of kind k for a case. A profiler that
// cannot run on this host returns a note instead.
func (rn *Runner) profileFork(ctx context.Context, o Options, k profile.Kind, c Case, cr *result.CaseResult, side, executable string) (result.ProfileRun, string) {
	pr := result.ProfileRun{Kind: string(k)}
	exe, err := rn.executable(executable)
	if err != nil {
		pr.Err = err
		return pr, ""
	}
	dir := filepath.Join(append([]string{rn.ProfileDir, side}, rn.fileName(cr.Case)...)...)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		pr.Err = err
		return pr, ""
	}
	p := o.planFor(c, 1)
	p.Lockstep = false // a profiling fork runs alone, after the rounds
	cmd := command{exe, rn.Args, rn.Env}
	switch {
	case k == profile.Perf:
		events := o.PerfEvents
		if len(events) == 0 {
			events = profile.PerfEvents
		}
		if ok, why := profile.PerfStatus(events); !ok {
			return pr, "perf: " + why
		}
		path, argv, env, out, err := profile.PerfCommand(exe, dir, events, rn.Args...)
		if err != nil {
			return pr, "perf: " + err.Error()
		}
		pr.Path = out
		cmd = command{path, argv, append(append([]string(nil), rn.Env...), env...)}
		p.Mode, p.Warmup, p.Measure = result.AverageTime, result.IterSpec{}, result.IterSpec{Count: 1, Ops: o.instructionOps()}
	case k == profile.Instructions:
		pr.Path = filepath.Join(dir, "callgrind.out")
		path, args, err := profile.CallgrindCommand(exe, pr.Path, rn.Args...)
		if err != nil {
			return pr, "instructions: " + err.Error()
		}
		cmd = command{path, args, profile.CallgrindEnv(rn.Env)}
		p.Mode, p.Warmup, p.Measure = result.AverageTime, result.IterSpec{}, result.IterSpec{Count: 1, Ops: o.instructionOps()}
	default:
		pr.Path = filepath.Join(dir, string(k)+".pb.gz")
		p.Profile, p.ProfilePath = k, pr.Path
	}
	res, fe := rn.forkOnce(ctx, cmd, p, o.Timeout, rn.logFile(cr.Case, string(k)))
	if fe != nil {
		fe.Benchmark, fe.Fork = cr.Case.Name(), 1
		valgrindFault(k, fe)
		pr.Err = fe
		return pr, ""
	}
	for _, it := range res.iterations {
		if !it.Warmup {
			pr.Ops += it.Total.Ops
		}
	}
	if k == profile.Perf {
		counts, err := profile.ParsePerfStat(pr.Path)
		if err != nil {
			pr.Err = err
		} else if pr.Ops > 0 {
			pr.Counters = map[string]float64{}
			for ev, n := range counts {
				pr.Counters[ev] = n / float64(pr.Ops)
			}
		}
	}
	if k == profile.Instructions {
		total, err := profile.ParseCallgrind(pr.Path)
		switch {
		case err != nil:
			pr.Err = err
		case total == 0 || pr.Ops == 0:
			pr.Err = fmt.Errorf("callgrind counted no instructions in the measured loop (benchmarks with invocation-level hooks time ops one by one outside it)")
		default:
			pr.InstructionsPerOp = float64(total) / float64(pr.Ops)
		}
	}
	return pr, ""
}

// valgrindFault names the failure of a fork run under valgrind that was
// valgrind's own (see profile.ValgrindFault), instead of the crash of the
// benchmark it looks like.
func valgrindFault(k profile.Kind, fe *result.ForkError) {
	if k != profile.Instructions {
		return
	}
	if why := profile.ValgrindFault(append([]string{fe.Fatal}, fe.Tail...)); why != "" {
		fe.Message = why
	}
}

func (o *Options) instructionOps() int64 {
	if o.InstructionOps <= 0 {
		return 20_000
	}
	return o.InstructionOps
}

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

func (rn *Runner) inProcess(c Case, p *measure.Plan, cr *result.CaseResult) *result.ForkError {
	sink, err := measure.Run(c.Bench, p, func(it *result.Iteration) error {
		cr.Iterations = append(cr.Iterations, *it)
		return nil
	})
	cr.Sink ^= sink
	cr.Procs = runtime.GOMAXPROCS(0)
	if err != nil {
		fe := &result.ForkError{Message: err.Error()}
		var pe *measure.PhaseError
		if errors.As(err, &pe) {
			fe.Phase, fe.Message, fe.Stack = pe.Phase, pe.Err.Error(), pe.Stack
		}
		return fe
	}
	return nil
}

// forkResult is what one fork reported.
type forkResult struct {
	cpus       []int
	procs      int
	iterations []result.Iteration
	startup    time.Duration // exec to hello
	ready      time.Duration // exec to the first iteration's start
	sink       uint64
	unsynced   bool // asked for lockstep, it ran without (a child of an older version)
}

// start answers a fork's ready frame with its schedule: its duet's, once
// the other fork is ready too, else one of its own.
func (rn *Runner) start(ctx context.Context, proc *fork.Process) error {
	sched := measure.Schedule{StartUnixNano: time.Now().UnixNano()}
	if rn.pair != nil {
		var err error
		if sched, err = rn.pair.arrive(ctx); err != nil {
			return err
		}
	}
	payload, err := json.Marshal(sched)
	if err != nil {
		return err
	}
	return proc.Send(fork.Go, payload)
}

// command is the program a fork runs: the executable itself, or a wrapper
// (valgrind) around it.
type command struct {
	path string
	args []string
	env  []string
}

func (rn *Runner) executable(exe string) (string, error) {
	if exe != "" {
		return exe, nil
	}
	return os.Executable()
}

func (rn *Runner) fork(ctx context.Context, exe string, p *measure.Plan, timeout time.Duration, cr *result.CaseResult) *result.ForkError {
	exe, err := rn.executable(exe)
	if err != nil {
		return &result.ForkError{Message: "find own executable: " + err.Error()}
	}
	res, fe := rn.forkOnce(ctx, command{exe, rn.Args, rn.Env}, p, timeout, rn.logFile(cr.Case, fmt.Sprintf("fork%d", p.Fork)))
	cr.Iterations = append(cr.Iterations, res.iterations...)
	cr.Sink ^= res.sink
	if res.cpus != nil {
		cr.ForkCPUs = append(cr.ForkCPUs, res.cpus)
	}
	if res.procs > 0 {
		cr.Procs = res.procs
	}
	if res.startup > 0 {
		cr.Startup = append(cr.Startup, res.startup)
	}
	if res.ready > 0 {
		cr.Ready = append(cr.Ready, res.ready)
	}
	if res.unsynced {
		cr.Notes = append(cr.Notes, fmt.Sprintf("fork %d did not keep the duet's schedule (its program predates lockstep): it ran at the same time as its pair, its iterations unaligned", p.Fork))
	}
	return fe
}

// fileName names a case's logs and profiles: the path elements of its
// benchfmt name, after its package's import path when the run's go test
// benchmarks come from several packages (two packages may each have a
// BenchmarkCompress), each escaped by safeElem.
func (rn *Runner) fileName(c result.Case) []string {
	name := c.Name()
	if rn.qualify {
		name = c.Pkg + "/" + name
	}
	elems := strings.Split(name, "/")
	for i, e := range elems {
		elems[i] = safeElem(e)
	}
	return elems
}

// safeElem is a name element as a file name that stays where it is put
// and is no other element's: letters, digits and . = - are kept, every
// other byte (the / of a flat log name's join, _, %, spaces, #) is %XX,
// and an element that is empty or only dots is escaped whole.
func safeElem(e string) string {
	var b strings.Builder
	dots := strings.Trim(e, ".") == ""
	for i := 0; i < len(e); i++ {
		c := e[i]
		if !dots && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '=' || c == '-') {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	if b.Len() == 0 {
		return "%" // the empty element
	}
	return b.String()
}

// logFile opens DIR/logs/<case>.<suffix>.log, capped at LogCap, or
// returns nil.
func (rn *Runner) logFile(c result.Case, suffix string) *cappedLog {
	if rn.LogDir == "" {
		return nil
	}
	if rn.side != "" {
		suffix = rn.side + "." + suffix // both sides of an A/B run have a fork 1
	}
	name := strings.Join(rn.fileName(c), "_") + "." + suffix + ".log"
	if err := os.MkdirAll(rn.LogDir, 0o755); err != nil {
		return nil
	}
	f, err := os.Create(filepath.Join(rn.LogDir, name))
	if err != nil {
		return nil
	}
	return &cappedLog{f: f, head: LogCap / 2, tail: make([]byte, LogCap/2)}
}

// forkOnce runs one fork of plan p with cmd and collects what it reports.
// The iterations it got are returned even when it fails.
func (rn *Runner) forkOnce(ctx context.Context, cmd command, p *measure.Plan, timeout time.Duration, log *cappedLog) (res forkResult, fe *result.ForkError) {
	var logw io.Writer
	if log != nil {
		defer log.Close()
		logw = log
	}
	env := cmd.env
	if len(rn.CPUs) > 0 && !hasEnv(env, "GOMAXPROCS") {
		env = append(append([]string(nil), env...), fmt.Sprintf("GOMAXPROCS=%d", len(rn.CPUs)))
	}
	proc, err := fork.Start(ctx, fork.Spec{Path: cmd.path, Args: cmd.args, Env: env, Log: logw, CPUs: rn.CPUs})
	if err != nil {
		return res, &result.ForkError{Message: err.Error()}
	}
	defer func() {
		werr := proc.Wait(5 * time.Second)
		if fe == nil && werr != nil {
			fe = &result.ForkError{Message: "child failed after reporting success"}
		}
		if fe != nil {
			if werr != nil {
				fe.Exit = exitStatus(werr)
			}
			fe.Tail = proc.StderrTail()
			if fatal := proc.Fatal(); fatal != "" && !slices.Contains(fe.Tail, fatal) {
				fe.Fatal = fatal
			}
			if log != nil {
				fe.Log = log.Name()
			}
		}
	}()
	fail := func(msg string, err error) *result.ForkError {
		switch {
		case ctx.Err() != nil:
			proc.Kill()
			return &result.ForkError{Message: msg + ": interrupted (the run was stopped while this fork ran); killed"}
		case errors.Is(err, fork.ErrTimeout):
			proc.Kill()
			return &result.ForkError{Message: fmt.Sprintf("%s: hung, no report for %s; killed", msg, timeout)}
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			// Not killed: its exit status (Wait's grace) says whether it
			// exited or only closed the link.
			return &result.ForkError{Message: msg + ": the child closed its link without reporting (it exited, or closed fd 3)"}
		}
		proc.Kill()
		return &result.ForkError{Message: fmt.Sprintf("%s: %v", msg, err)}
	}
	f, err := proc.Next(timeout)
	if err != nil {
		return res, fail("waiting for hello", err)
	}
	if f.Type != fork.Hello {
		return res, fail("waiting for hello", fmt.Errorf("got a %s frame", f.Type))
	}
	res.startup = time.Since(proc.Started())
	var hi hello
	if err := json.Unmarshal(f.Payload, &hi); err != nil {
		return res, fail("decode hello", err)
	}
	res.cpus, res.procs = hi.CPUs, hi.GOMAXPROCS
	payload, err := json.Marshal(p)
	if err != nil {
		return res, fail("encode plan", err)
	}
	if err := proc.Send(fork.Plan, payload); err != nil {
		return res, fail("send plan", err)
	}
	return rn.reports(ctx, proc, p, res, timeout+max(p.Warmup.Time, p.Measure.Time), fail)
}

// reports reads a fork's reports after its plan: iterations, each the
// next its plan asks for, until done or an error; fail words a failure of
// the link. The iterations it got are returned even when it fails.
func (rn *Runner) reports(ctx context.Context, proc *fork.Process, p *measure.Plan, res forkResult, wait time.Duration,
	fail func(string, error) *result.ForkError) (forkResult, *result.ForkError) {
	ready := false
	for {
		f, err := proc.Next(wait)
		if err != nil {
			return res, fail("running", err)
		}
		switch f.Type {
		case fork.Ready:
			if !p.Lockstep || ready || len(res.iterations) > 0 {
				return res, fail("running", errors.New("a ready frame the plan did not ask for"))
			}
			ready = true
			if err := rn.start(ctx, proc); err != nil {
				return res, fail("starting in lockstep", err)
			}
		case fork.Iteration:
			if p.Lockstep && !ready && !res.unsynced {
				// A child that predates lockstep: it runs at the same
				// time as its pair, unscheduled; the pair waits no more.
				res.unsynced = true
				if rn.pair != nil {
					rn.pair.leave()
				}
			}
			var it result.Iteration
			if err := json.Unmarshal(f.Payload, &it); err != nil {
				return res, fail("decode iteration", err)
			}
			if err := planned(p, len(res.iterations), &it); err != nil {
				proc.Kill()
				res.iterations = nil
				return res, &result.ForkError{Message: err.Error() + ": results the plan did not ask for are not counted, nor any other of this fork"}
			}
			if len(res.iterations) == 0 {
				res.ready = time.Duration(it.StartUnixNano - proc.Started().UnixNano())
			}
			res.iterations = append(res.iterations, it)
		case fork.Done:
			var d done
			if err := json.Unmarshal(f.Payload, &d); err != nil {
				return res, fail("decode done", err)
			}
			res.sink = d.Sink
			if len(res.iterations) == 0 {
				return res, &result.ForkError{Message: "the child reported done without any iteration (a child of another version, or a broken one)"}
			}
			if n, want := len(res.iterations), p.Warmup.Count+p.Measure.Count; n != want {
				res.iterations = nil
				return res, &result.ForkError{Message: fmt.Sprintf("the child reported done after %d iterations where the plan asked for %d (%d warmup, %d measured): none is counted", n, want, p.Warmup.Count, p.Measure.Count)}
			}
			return res, nil
		case fork.Error:
			var fl failure
			if err := json.Unmarshal(f.Payload, &fl); err != nil {
				return res, fail("decode error report", err)
			}
			return res, &result.ForkError{Phase: fl.Phase, Message: fl.Message, Stack: fl.Stack}
		default:
			return res, fail("running", fmt.Errorf("unexpected %s frame", f.Type))
		}
	}
}

// planned checks that it, the i-th iteration a fork reported, is the one
// plan p asks for next: of p's fork, warmup iterations first, indices in
// order, no more than asked for. A child reports them so unless the
// benchmark writes on the link itself.
func planned(p *measure.Plan, i int, it *result.Iteration) error {
	w, m := p.Warmup.Count, p.Measure.Count
	if i >= w+m {
		return fmt.Errorf("the child reported iteration %d where the plan asked for %d (%d warmup, %d measured)", i+1, w+m, w, m)
	}
	warm, index := i < w, i
	if !warm {
		index = i - w
	}
	if it.Fork != p.Fork || it.Warmup != warm || it.Index != index {
		phase := func(warm bool) string {
			if warm {
				return "warmup"
			}
			return "measured"
		}
		return fmt.Errorf("the child reported %s iteration %d of fork %d where the plan asked for %s iteration %d of fork %d",
			phase(it.Warmup), it.Index, it.Fork, phase(warm), index, p.Fork)
	}
	return nil
}

func exitStatus(err error) string {
	var ee interface{ ExitCode() int }
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		return fmt.Sprintf("exit status %d", ee.ExitCode())
	}
	return err.Error()
}

func hasEnv(env []string, key string) bool {
	for _, e := range env {
		if strings.HasPrefix(e, key+"=") {
			return true
		}
	}
	return false
}
