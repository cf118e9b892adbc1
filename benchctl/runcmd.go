package benchctl

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
	"github.com/ledgerbench/ledgerbench/internal/atomicfile"
	"github.com/ledgerbench/ledgerbench/internal/axis"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/gotest"
	"github.com/ledgerbench/ledgerbench/internal/profile"
	"github.com/ledgerbench/ledgerbench/internal/revision"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// runFlags are the raw flag values of a run (run, ab, nightly).
type runFlags struct {
	defaults                                       engine.Options // the command's, shown in its help
	suite, bench, mode, warmup, measure, out, prof string
	params                                         []string
	forks, threads                                 int
	seed                                           uint64
	timeout                                        time.Duration
	quick                                          bool
	strict, ignoreLock                             bool
	cpus                                           string
	lock                                           hostLock
	cooldown, idleLoad                             float64
	cooldownTimeout, idleTimeout                   time.Duration
	precision                                      string
	budget                                         time.Duration
	jmh                                            bool
	duet                                           bool // ab and calibrate only
	shard                                          string
}

func (a *app) runCmd() *cobra.Command {
	var f runFlags
	var untilDecided bool
	var fleet fleetFlags
	c := &cobra.Command{
		Use:   "run [flags] [PACKAGES...]",
		Short: "Run benchmarks in forked workers and write bench.txt and bench.json",
		Long: `run measures the benchmarks this program registers, or, given Go package patterns (./...,
./internal/cache, or a package of the module graph such as github.com/cespare/xxhash/v2), the
ordinary testing.B benchmarks of those packages.

For packages, each package's test binary is built once (go test -c, with this module's graph and
the local toolchain) and always runs in the package's own directory, as go test runs it. Its
benchmarks are listed with -test.list, and their sub-benchmarks are found by running each selected
top-level benchmark once at b.N=1 (-test.benchtime=1x) in a process of its own, bounded by
--timeout. --bench has go test -bench's semantics: the pattern is split at slashes into one
unanchored regexp per level. Each benchmark then runs alone in --forks processes
(-test.bench matching its path exactly), interleaved with the others in seeded rounds. Each
process runs the benchmark --warmup COUNT + --measure COUNT times (-test.count) at the
measurement's -test.benchtime (TIME, or Nx for COUNTxNops), and the warmup runs are discarded;
unless --warmup or --measure are given, that is no warmup run and 3 of 500 ms. A side's later
forks run at the median b.N its first fork found (Nx), so no count ramps b.N up again. It also
passes -benchmem, -test.v (so a benchmark's own prints never split a result line) and -test.cpu
(--threads, else the number of --cpus, else GOMAXPROCS). bench.txt keeps go test's own ns/op,
B/op, allocs/op, MB/s and b.ReportMetric units under the package's real pkg key. --prof cpu, block,
mutex and allocs use the test binary's own profile flags at a fixed b.N. --prof instructions runs
callgrind twice, at b.N=K and 2K, and divides the difference by K.`,
		Example: fmt.Sprintf(`  %[1]s run --quick
  %[1]s run ./... --bench . --quick
  %[1]s run github.com/cespare/xxhash/v2 --bench 'Sum64/4KB' --forks 5 --prof cpu
  %[1]s run --suite SUITE --bench 'Insert' -p size=64,4096 --forks 5 --measure 10x500ms
  %[1]s run --bench Kernel --mode sample --measure 5x100000ops`, a.name),
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if fleet.url != "" || cmd.Flags().Changed("class") || cmd.Flags().Changed("job-time") {
				return a.runOnFleet(cmd, &f, fleet, decides(cmd, len(args)), len(args))
			}
			if len(args) > 0 {
				return a.runPackages(cmd, &f, args)
			}
			o, cases, err := a.plan(cmd, &f)
			if err != nil {
				return err
			}
			if decides(cmd, 0) {
				if err := bindRunUntilDecided(cmd, &o, &f); err != nil {
					return err
				}
			}
			s, err := a.prepare(cmd.Context(), &o, &f)
			if err != nil {
				return err
			}
			defer s.Release()
			return a.doRun(cmd, o, cases, &f, s, nil)
		},
	}
	a.addRunCmdFlags(c, &f, &untilDecided, &fleet)
	return c
}

// addRunCmdFlags declares run's flags: a sharded run's, and its own.
func (a *app) addRunCmdFlags(c *cobra.Command, f *runFlags, untilDecided *bool, fleet *fleetFlags) {
	a.addShardedRunFlags(c, f, engine.DefaultOptions())
	q := engine.QuickOptions()
	c.Flags().Lookup("quick").Usage = fmt.Sprintf("quick run: %s warmup, %s measurement and the smaller datasets benchmarks declare for it (explicit flags still win); of this program's benchmarks, --until-decided by default: 3 forks, then forks until every change of %g %% or more is decided, within %s unless --budget (--until-decided=false, --forks or --precision: %d forks)",
		q.Warmup, q.Measure, axis.QuickOver*100, quickBudget, q.Forks)
	c.Flags().BoolVar(&f.jmh, "jmh", false, "print the JMH table (every case's score, error and count) after the pull-request tables, not only into DIR/table.txt")
	c.Flags().BoolVar(untilDecided, "until-decided", false, "after each fork from the --forks-th (default 3), decide the pull-request tables' rows by an anytime-valid test and give forks only to the cases of undecided rows, until all are decided or --budget is spent (the default of --quick)")
	fleet.bind(c.Flags(), "measure on the agents of a fleet, by its PostgreSQL URL (see benchctl agent): this program is published to them, and each job runs whole comparison groups in rounds on one agent (with --until-decided, batches of --forks rounds of the undecided rows' groups)")
	a.addServerFlags(c)
}

// decides is whether a run gives forks until its rows are decided:
// --until-decided when given (packages: only then); otherwise a --quick
// run of this program's benchmarks does, unless --forks or --precision
// asks for a number of forks.
func decides(cmd *cobra.Command, packages int) bool {
	fl := cmd.Flags()
	if fl.Changed("until-decided") || packages > 0 {
		v, _ := fl.GetBool("until-decided")
		return v
	}
	quick, _ := fl.GetBool("quick")
	return quick && !fl.Changed("forks") && !fl.Changed("precision")
}

// bindRunUntilDecided binds run --until-decided into o: the first
// rounds (--forks, 3 by default) and the budget.
func bindRunUntilDecided(cmd *cobra.Command, o *engine.Options, f *runFlags) error {
	if o.Precision > 0 {
		return usageError(errors.New("--until-decided and --precision: one goal at a time"))
	}
	if !cmd.Flags().Changed("forks") {
		o.Forks = verdict.MinSamples
	} else if o.Forks < verdict.MinSamples {
		return usageError(fmt.Errorf("--forks %d: --until-decided looks at the rows from round %d on; --forks is the first rounds every case runs", o.Forks, verdict.MinSamples))
	}
	o.UntilDecided, o.Budget = true, f.budget
	if o.Quick && !cmd.Flags().Changed("budget") {
		o.Budget = quickBudget
	}
	return nil
}

// resultCases are the planned cases as results name them.
func resultCases(cases []engine.Case) []result.Case {
	out := make([]result.Case, len(cases))
	for i, c := range cases {
		out[i] = c.Result()
	}
	return out
}

// quickBudget is run --quick --until-decided's budget unless --budget:
// the 5 minutes the main job may take on a busy machine, less its
// builds, set-up and tables.
const quickBudget = 4*time.Minute + 40*time.Second

// waitOver is the smallest change run --until-decided waits for: with
// --quick the large ones (axis.QuickOver), else every row.
func waitOver(o engine.Options) float64 {
	if o.UntilDecided && o.Quick {
		return axis.QuickOver
	}
	return 0
}

// reportRunUndecided says how many cases --until-decided decided, and
// why each compared case's row that is not decided is not.
func (a *app) reportRunUndecided(w *axis.Wait, r *session.Recorded) {
	look, err := w.Look(r.Data)
	if err != nil {
		a.say("--until-decided: the rows could not be decided: %v", err)
		return
	}
	a.sayBudgetCut(r.Runs, r.Runs[0].Config.Budget)
	run := r.Runs[0]
	cases, forks := make([]result.Case, len(run.Cases)), map[string]int{}
	for i, cr := range run.Cases {
		cases[i], forks[cr.Case.Name()] = cr.Case, len(cr.ForkScores())
	}
	decided, undecided := w.Count(look, cases, func(name string) int { return forks[name] })
	waits := ""
	if w.Over > 0 {
		waits = fmt.Sprintf(", waiting for changes of %g %% or more (run --until-decided without --quick waits for every row)", w.Over*100)
	}
	a.say("--until-decided: %d of %d cases decided in %s (budget %s)%s", decided, len(run.Cases), run.End.Sub(run.Start).Round(time.Second), run.Config.Budget, waits)
	if len(undecided) > 0 {
		a.say("undecided (their rows say unknown, with the sequence of their change):\n  %s", strings.Join(undecided, "\n  "))
	}
}

// addRunFlags declares the flags of a run (run, ab, nightly, calibrate)
// with the command's defaults, which --quick replaces by
// engine.QuickOptions.
func (a *app) addRunFlags(c *cobra.Command, f *runFlags, def engine.Options) {
	f.defaults = def
	q := engine.QuickOptions()
	fl := c.Flags()
	fl.StringVar(&f.suite, "suite", def.Suite, "suite to run: "+strings.Join(engine.Suites(a.registry), ", "))
	fl.StringVar(&f.bench, "bench", "", "regexp selecting benchmarks by name (BenchmarkX/param=value…) or family/Name")
	fl.StringArrayVarP(&f.params, "param", "p", nil, "override a parameter's values: name=v1,v2 (repeatable)")
	fl.IntVar(&f.forks, "forks", def.Forks, "forked worker processes per benchmark; 0 runs in process (less trustworthy)")
	fl.StringVar(&f.warmup, "warmup", def.Warmup.String(), "warmup iterations: COUNTxTIME, COUNTxNops or COUNT")
	fl.StringVar(&f.measure, "measure", def.Measure.String(), "measurement iterations: COUNTxTIME, COUNTxNops or COUNT")
	fl.StringVar(&f.mode, "mode", "", "mode for every benchmark: avgt, thrpt, sample, ss (default: each benchmark's own)")
	fl.IntVar(&f.threads, "threads", 0, "worker goroutines (group benchmarks round up to whole group instances, as JMH does; default: each benchmark's own)")
	fl.BoolVar(&f.quick, "quick", false, fmt.Sprintf("quick run: %d forks, %s warmup, %s measurement, and the smaller datasets benchmarks declare for it (explicit flags still win)", q.Forks, q.Warmup, q.Measure))
	fl.Uint64Var(&f.seed, "seed", def.Seed, "seed of every generated input and of the fork order")
	fl.DurationVar(&f.timeout, "timeout", def.Timeout, "kill a fork that reports nothing for this long beyond its iteration time")
	fl.StringVar(&f.out, "out", "", "output directory (default results/runs/<UTC stamp>)")
	fl.BoolVar(&f.strict, "strict", false, "refuse to run on a host that is not pinned (see check)")
	fl.StringVar(&f.cpus, "cpus", "", "pin every fork to these CPUs (2,3 or 2-3) and set GOMAXPROCS to their number")
	fl.Float64Var(&f.cooldown, "cooldown", 0, "before each fork, wait until every thermal zone is at or below this many °C")
	fl.DurationVar(&f.cooldownTimeout, "cooldown-timeout", 5*time.Minute, "longest cool-down wait before going on with a warning")
	fl.Float64Var(&f.idleLoad, "idle-load", 0, "before each fork, wait until the 1-minute load average is below this")
	fl.DurationVar(&f.idleTimeout, "idle-timeout", 5*time.Minute, "longest idle wait before going on with a warning")
	fl.BoolVar(&f.ignoreLock, "ignore-lock", false, "run even when another run holds the host's run lock")
	f.lock.register(c, "the run lock file")
	fl.StringVar(&f.precision, "precision", "", "keep adding forks (--forks is then the least) until each case's 95 % interval is within ±this of its score, e.g. 1%, or --budget is spent")
	fl.DurationVar(&f.budget, "budget", engine.DefaultBudget, "with --precision or --until-decided, the longest the run may take")
	fl.StringVar(&f.prof, "prof", "", "profilers, run in extra forks after the measured ones: cpu,offcpu,block,mutex,allocs,instructions,perf")
}

// shardOption is --shard's share (every case when not given).
func (f *runFlags) shardOption() (engine.Shard, error) {
	if f.shard == "" {
		return engine.Shard{}, nil
	}
	sh, err := engine.ParseShard(f.shard)
	if err != nil {
		return sh, fmt.Errorf("--shard %w", err)
	}
	return sh, nil
}

// addShardedRunFlags declares the flags of a run and --shard, on the
// commands that split their cases over hosts (run, ab).
func (a *app) addShardedRunFlags(c *cobra.Command, f *runFlags, def engine.Options) {
	a.addRunFlags(c, f, def)
	c.Flags().StringVar(&f.shard, "shard", "", "run only share I/N of the selected cases (1/4): a deterministic share by planned time, each benchmark's implementations together, for a CI matrix or an indexed job; compare the shares' files together")
}

// flagOf names the flag of each engine option, so errors name what the
// user typed.
var flagOf = map[string]string{
	"Suite": "--suite", "Bench": "--bench", "Params": "-p", "Forks": "--forks", "Warmup": "--warmup",
	"Measure": "--measure", "Mode": "--mode", "Threads": "--threads", "Timeout": "--timeout", "Profiles": "--prof",
	"Precision": "--precision", "Budget": "--budget", "Shard": "--shard",
}

// flagError rewords the engine's option errors with the flags' names.
func flagError(err error) error {
	var errs []error
	for _, e := range unjoin(err) {
		var oe *engine.OptionError
		if errors.As(e, &oe) {
			name := flagOf[oe.Option]
			if name == "" {
				name = strings.ToLower(oe.Option)
			}
			if oe.Value != "" {
				e = fmt.Errorf("%s %s: %w", name, oe.Value, oe.Err)
			} else {
				e = fmt.Errorf("%s: %w", name, oe.Err)
			}
		}
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// plan binds the flags and plans the run once (validating the options):
// every later step takes these cases. Bad input is a usage error.
func (a *app) plan(cmd *cobra.Command, f *runFlags) (engine.Options, []engine.Case, error) {
	o, err := a.options(cmd, f)
	if err != nil {
		return o, nil, err
	}
	if err := a.declaresNone(cmd.Name()); err != nil {
		return o, nil, err
	}
	if err := a.outsideHome(cmd); err != nil {
		return o, nil, err
	}
	cases, err := o.Plan(a.registry)
	if err != nil {
		return o, nil, usageError(flagError(err))
	}
	return o, cases, nil
}

// options binds and checks the flags of a run, whatever it runs; Plan,
// or validate for package arguments, checks the options themselves.
func (a *app) options(cmd *cobra.Command, f *runFlags) (engine.Options, error) {
	o, err := f.options(cmd)
	if err != nil {
		return o, usageError(err)
	}
	if o.Shard, err = f.shardOption(); err != nil {
		return o, usageError(err)
	}
	for name, v := range map[string]float64{"--cooldown": f.cooldown, "--idle-load": f.idleLoad} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return o, usageError(fmt.Errorf("%s %g: must be a finite number, 0 or more", name, v))
		}
	}
	if f.lock.wait < 0 {
		return o, usageError(fmt.Errorf("--wait-lock %s: must not be negative", f.lock.wait))
	}
	if f.lock.path == "" && !f.ignoreLock {
		return o, usageError(errors.New("--lock is empty: name the run lock file, or pass --ignore-lock"))
	}
	if cmd.Flags().Changed("suite") && f.suite == "" {
		return o, usageError(errors.New("--suite is empty (all runs every benchmark)"))
	}
	return o, nil
}

// validate checks options that will not be planned against the registry.
func validate(o engine.Options) error {
	if err := o.Validate(); err != nil {
		return usageError(flagError(err))
	}
	return nil
}

// MinBudget is the smallest --budget: under a second, not even the first
// round of a case runs within it.
const MinBudget = time.Second

// options binds the flags into engine.Options: the defaults (or the quick
// ones), then every flag the user set.
func (f *runFlags) options(cmd *cobra.Command) (engine.Options, error) {
	o := f.defaults
	if f.quick {
		o = engine.QuickOptions()
	}
	set := cmd.Flags().Changed
	if set("budget") && f.budget < MinBudget {
		return o, fmt.Errorf("--budget %s: want at least %s (the time the run may take adding rounds; the first rounds alone take longer)", f.budget, MinBudget)
	}
	o.Suite, o.Bench, o.Seed, o.Timeout = f.suite, f.bench, f.seed, f.timeout
	if set("forks") {
		o.Forks = f.forks
	}
	if set("warmup") {
		spec, err := result.ParseIterSpec(f.warmup, o.Warmup)
		if err != nil {
			return o, fmt.Errorf("--warmup: %w", err)
		}
		o.Warmup, o.WarmupExplicit = spec, true
	}
	if set("measure") {
		spec, err := result.ParseIterSpec(f.measure, o.Measure)
		if err != nil {
			return o, fmt.Errorf("--measure: %w", err)
		}
		o.Measure = spec
	}
	if f.mode != "" {
		m, err := result.ParseMode(f.mode)
		if err != nil {
			return o, fmt.Errorf("--mode: %w", err)
		}
		o.Mode = m
	}
	o.Threads, o.Duet = f.threads, f.duet
	if f.precision != "" {
		p, err := percentArg("--precision", f.precision, 100, false)
		if err != nil {
			return o, err
		}
		o.Precision, o.Budget = p, f.budget
		if !set("forks") {
			o.Forks = max(o.Forks, engine.PrecisionForks)
		}
	}
	if f.prof != "" {
		kinds, err := profile.ParseKinds(f.prof)
		if err != nil {
			return o, fmt.Errorf("--prof: %w", err)
		}
		o.Profiles = kinds
	}
	o.Params = engine.Overrides{}
	for _, p := range f.params {
		if err := o.Params.Add(p); err != nil {
			return o, fmt.Errorf("-p: %w", err)
		}
	}
	return o, nil
}

// doRun measures the cases on one side, on the prepared host s, and
// writes bench.txt and bench.json; tp, for go test benchmarks, holds
// their test binaries.
func (a *app) doRun(cmd *cobra.Command, o engine.Options, cases []engine.Case, f *runFlags, s *session.Session, tp *revision.TestPlan) error {
	all := len(cases)
	cases, err := o.Shard.Of(cases, o)
	if err != nil {
		return usageError(fmt.Errorf("--shard: %w", err))
	}
	out, err := f.outDir("runs")
	if err != nil {
		return err
	}
	if !o.Shard.Whole() {
		a.say("shard %s: %d of the %d selected cases", o.Shard, len(cases), all)
	}
	m := &session.Recording{Options: o, Cases: cases, Dir: a.dir, Out: session.ResultsDir(out),
		LogDir: filepath.Join(out, "logs"), ProfileDir: filepath.Join(out, "profiles")}
	var launch engine.Launcher = engine.Program{}
	var broken []string
	switch {
	case tp != nil:
		launch, m.Notes, broken = tp.Bins, tp.Notes, tp.Broken
		if w := o.Warmup; w.Count > 0 && gotest.Benchtime(w) != gotest.Benchtime(o.Measure) {
			a.say("go test benchmarks: the %d warmup runs use the measurement's -test.benchtime %s (one process has one benchtime), not %s", w.Count, gotest.Benchtime(o.Measure), gotest.Benchtime(w))
		}
	case o.Forks == 0:
		launch = engine.InProcess{}
		a.say("WARNING: --forks 0 runs every benchmark inside this process and gives up what forks give: no --timeout (a hung op hangs the run), signals stop it only between benchmarks, a crash or os.Exit in an op ends %s with the run's results unwritten, and heap, GC and scheduler state carry over between benchmarks", a.name)
	}
	m.Sides = []engine.Side{{Launch: launch}}
	a.say("%d cases × %d forks, warmup %s, measure %s, seed %d → %s", len(cases), max(o.Forks, 1), o.Warmup, o.Measure, o.Seed, out)
	a.say("host-pinned=%s: %s", s.Pinned(), s.Check.Note())
	// The tables first: a disk too full for the files must not lose what
	// was measured.
	m.Before = a.runTables(o, f.jmh, out)
	wait := axis.NewWait(resultCases(cases), waitOver(o))
	if o.UntilDecided {
		m.Decide = wait.Decide
	}
	r, err := s.Record(cmd.Context(), m)
	if err != nil {
		return err
	}
	if o.UntilDecided {
		a.reportRunUndecided(wait, r)
	}
	fmt.Fprintf(a.stdout, "\nresults: %s and %s\n", filepath.Join(out, "bench.txt"), filepath.Join(out, "bench.json"))
	run := r.Runs[0]
	for _, n := range run.ProfileNotes {
		a.say("profiler %s", n)
	}
	if len(o.Profiles) > 0 {
		summary, err := report.WriteProfileSummary(filepath.Join(out, "profiles"), run)
		if err != nil {
			return failedError(fmt.Sprintf("writing the profile summary: %v", err))
		}
		fmt.Fprintf(a.stdout, "\n%s\nprofiles: %s\n", summary, filepath.Join(out, "profiles"))
	}
	return r.Outcome(broken, out)
}

// runTables is run's Before: the answer first, the pull-request table of
// each implementation axis; then the precision reached. The JMH table
// (every case's score) goes to out/table.txt, and to stdout with jmh or
// when the run has no pull-request table (the JMH table is its answer).
func (a *app) runTables(o engine.Options, jmh bool, out string) func(*session.Recorded) error {
	return func(r *session.Recorded) error {
		run := r.Runs[0]
		var table, pr bytes.Buffer
		if err := report.WriteTable(&table, run); err != nil {
			return failedError(fmt.Sprintf("rendering the table: %v", err))
		}
		if err := axis.Write(&pr, r.Header, run, o.UntilDecided); err != nil {
			a.say("the pull-request table could not be made: %v", err)
		}
		a.stdout.Write(pr.Bytes())
		tablePath := filepath.Join(out, "table.txt")
		if err := atomicfile.Replace(tablePath, table.Bytes()); err != nil {
			a.say("the JMH table could not be written to %s: %v", tablePath, err)
		}
		switch {
		case pr.Len() == 0:
			a.stdout.Write(table.Bytes())
		case jmh:
			fmt.Fprintf(a.stdout, "\n## Every case (JMH's table)\n\n")
			a.stdout.Write(table.Bytes())
		default:
			fmt.Fprintf(a.stdout, "\nevery case's score, error and count (JMH's table): %s (--jmh prints it)\n", tablePath)
		}
		if o.Precision > 0 {
			a.reportPrecision(o, run)
		}
		return nil
	}
}

// outDir is --out, or results/<kind>/<UTC stamp> (see session.OutDir).
func (f *runFlags) outDir(kind string) (string, error) { return session.OutDir(f.out, kind) }

// reportPrecision says which cases reached the precision asked for, and
// notes it with each case.
func (a *app) reportPrecision(o engine.Options, run *result.Run) {
	var reached int
	var missed []string
	for _, cr := range run.Cases {
		forks := map[int]bool{}
		for _, it := range cr.Iterations {
			forks[it.Fork] = true
		}
		w := engine.RelativeHalfWidth(cr)
		note := fmt.Sprintf("precision: ±%.2f %% after %d forks (asked ±%g %%)", 100*w, len(forks), 100*o.Precision)
		if w <= o.Precision {
			reached++
		} else {
			missed = append(missed, fmt.Sprintf("%s ±%.2f %% after %d forks", cr.Case.Name(), 100*w, len(forks)))
			note += ", not reached"
		}
		cr.Notes = append(cr.Notes, note)
	}
	a.say("precision ±%g %% (95 %% interval of the forks' mean): %d of %d cases reached it in %s (budget %s)",
		100*o.Precision, reached, len(run.Cases), run.End.Sub(run.Start).Round(time.Second), o.Budget)
	for _, m := range missed {
		a.say("  not reached: %s", m)
	}
}
