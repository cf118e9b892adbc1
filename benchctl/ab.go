package benchctl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/hostcheck"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/atomicfile"
	"github.com/ledgerbench/ledgerbench/internal/bisect"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// abFlags are the flags of `ab` beyond the run flags.
type abFlags struct {
	base, head, cmd, policy     string
	comment, buildCache         string
	allowDirty, confirm, anyway bool
	untilDecided, json          bool
	minChange, alpha            float64
	detect                      string
	explain                     string
	explainRounds               int
	fleet                       fleetFlags
}

func (a *app) abCmd() *cobra.Command {
	var f runFlags
	var af abFlags
	c := &cobra.Command{
		Use:   "ab --base REV [--head REV|.] [--cmd ./path/to/main] [run flags] [PACKAGES...]",
		Short: "Build two revisions and run their forks interleaved; print the pull-request table",
		Long: `ab builds this benchmark program (the main package that calls benchctl.Main, or --cmd) at
two revisions of its git repository, in worktrees and with the same toolchain, runs every case's
forks on both, interleaved (A B or B A per case and round, in a seeded order recorded in the
file), writes DIR/ab.txt whose only varying key is toolchain (baseline|experiment), and prints
the Markdown table for the pull request.

When the base revision lacks the program or a benchmark (a commit from before the benchmark
existed), the base's code is measured with the experiment's benchmark declarations overlaid
(go build -overlay: the main package, and the files that import package harness), and the output
and ab.txt say so. Benchmarks on one side only are listed.

With package arguments, ab builds those packages' test binaries at both revisions instead and
interleaves their go test benchmarks (see run). A baseline package that lacks a benchmark the
experiment has is rebuilt with the experiment's _test.go files overlaid (go test -overlay), and
the table and ab.txt say so.

A benchmark program built at a commit is kept in --build-cache by its tree hash and toolchain, so
the next comparison against the same base does not build it again (as bisect's steps do); the
working tree, overlaid builds and packages' test binaries are built every time.

Each fork is one sample (the median of its iterations), and each round's two forks are one pair:
the change is the geometric mean of the pairs' ratios, with its interval. Every row gets a verdict
at the false-discovery rate --alpha across the rows of its unit: changed (significant, and at least
--min-change), same (the interval within ±--min-change) or unknown, and the smallest change its
samples could detect at 80 % power. ab runs ` + fmt.Sprint(engine.ABRounds) + ` rounds unless --forks (or --quick) says
otherwise, ` + fmt.Sprint(engine.DuetRounds) + ` with --duet, whose rounds take half the machine time.

--duet runs each round's two forks at the same time, each pinned to half of the CPUs (swapped every
round), their measured iterations on one schedule, so the host's noise hits both and the pair's
ratio cancels it; it needs two CPUs.

--head . (the default) measures the working tree as it is. Exit status 1 when a time or throughput
row's verdict is changed for the worse (with --confirm, only if a second A/B run finds it too),
on a failed fork or on a revision that does not build.`,
		Example: fmt.Sprintf(`  %[1]s ab --base origin/main --head . --forks 5
  %[1]s ab --base origin/main ./internal/cache --bench Get
  %[1]s ab --base v0.1.0 --head HEAD --bench Insert --min-change 3 --confirm`, a.name),
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.ab(cmd, &f, &af, args)
		},
	}
	a.addShardedRunFlags(c, &f, engine.ABOptions())
	c.Flags().Lookup("prof").Usage = "instructions: count each case's instructions per op under callgrind (one fork a side, after the rounds) and set their change beside the time's"
	c.Flags().Lookup("budget").Usage = "the longest the whole command may take, builds, first rounds, confirmation and explanation included (no round starts that would end past it): with --until-decided (the default when --budget is given), --detect or --precision"
	a.addServerFlags(c)
	af.bind(c.Flags(), &f)
	return c
}

// bind defines ab's own flags in fl.
func (af *abFlags) bind(fl *pflag.FlagSet, f *runFlags) {
	fl.StringVar(&af.base, "base", "", "the baseline revision")
	fl.StringVar(&af.head, "head", ".", "the experiment revision, or . for the working tree")
	fl.StringVar(&af.cmd, "cmd", "", "the benchmark program's main package (default: the one this binary was built from)")
	fl.StringVar(&af.buildCache, "build-cache", bisect.DefaultBuildCache(), `where programs built at commits are kept by tree hash, for the next comparison of the same commit ("off": build both sides afresh)`)
	fl.BoolVar(&af.allowDirty, "allow-dirty", false, "with --head HEAD, measure HEAD even though the working tree has uncommitted changes")
	fl.BoolVar(&f.duet, "duet", false, "run each round's two forks at the same time, each pinned to half of the CPUs (swapped every round), so the host's noise hits both and each round's pair cancels it")
	fl.StringVar(&af.detect, "detect", "", "plan for this smallest detectable change (2%): after the first --forks rounds, refuse (exit 2) when a case needs more rounds than --budget leaves, else add rounds to each case until it can detect it")
	fl.BoolVar(&af.untilDecided, "until-decided", false, "after each round from the --forks-th (default 3), decide every row by an anytime-valid test and give rounds only to the undecided ones, until all are decided or --budget is spent (the default when --budget is given)")
	fl.BoolVar(&af.anyway, "anyway", false, "with --detect, measure within --budget even when the plan says it cannot be reached")
	fl.BoolVar(&af.confirm, "confirm", false, "confirm a regression with a second A/B run before failing")
	fl.StringVar(&af.policy, "policy", "", "a JSON policy file: per-benchmark thresholds a regression must surely exceed to fail, and expected regressions that fail nothing (docs/running.md)")
	fl.StringVar(&af.comment, "comment", "", "also write the pull-request comment to this file: a marker line a CI job finds its earlier comment by, the table, and which regressions fail the check")
	fl.BoolVar(&af.json, "json", false, "print the verdicts as JSON on stdout instead of the pull-request table (schema "+compare.JSONSchema+", docs/running.md)")
	fl.StringVar(&af.explain, "explain", "changed", "which rows to explain by their functions, from CPU profiles of both sides in extra forks after the rounds: changed (the rows whose time changed), all, or off")
	fl.IntVar(&af.explainRounds, "explain-rounds", ab.DefaultExplainRounds, "the CPU profiling forks of each side of an explained row (the pairs of its functions' intervals)")
	fl.Float64Var(&af.minChange, "min-change", compare.DefaultMinChange, "the margin of the verdicts, in percent: a smaller change is none, and an interval within ± it is \"same\"")
	fl.Float64Var(&af.alpha, "alpha", compare.DefaultAlpha, "the verdicts' false-discovery rate across a unit's rows")
	af.fleet.bind(fl, "measure the rounds on a fleet's agents: its PostgreSQL database (postgres://USER@HOST:PORT/DB); the programs are built here, each machine's pairs are a stratum, and the same arguments started again take back their jobs (docs/fleet.md)")
}

// ab runs ab with the bound flags: plans, compares, shows the result.
func (a *app) ab(cmd *cobra.Command, f *runFlags, af *abFlags, args []string) error {
	o, cases, err := a.planOrPackages(cmd, f, args)
	if err != nil {
		return err
	}
	if o.Duet && !cmd.Flags().Changed("forks") && !f.quick {
		o.Forks = engine.DuetRounds
	}
	if err := af.adaptive(cmd, &o, f); err != nil {
		return err
	}
	explain, err := ab.ParseExplain(af.explain)
	if err != nil {
		return err
	}
	var policy *ab.Policy
	if af.policy != "" {
		if policy, err = ab.LoadPolicy(af.policy); err != nil {
			return usageError(fmt.Errorf("--policy %w", err))
		}
	}
	opts := ab.Options{Base: af.base, Head: af.head, AllowDirty: af.allowDirty, Program: af.cmd, Packages: args, Cases: cases,
		Engine: o, Alpha: af.alpha, MinChange: af.minChange, Confirm: af.confirm, Dir: a.dir, Out: f.out, Host: f.hostOptions(),
		Explain: explain, ExplainRounds: af.explainRounds, Policy: policy, BuildCache: af.buildCache}
	var closer io.Closer
	if opts.Remote, closer, err = a.remote(cmd, af.fleet); err != nil {
		return err
	}
	if closer != nil {
		defer closer.Close()
	}
	res, err := ab.Run(cmd.Context(), a.env(), opts)
	if res != nil {
		if perr := a.showAB(res, af); perr != nil {
			return perr
		}
	}
	return err
}

// fleetFlags are --fleet, --class and --job-time.
type fleetFlags struct {
	url, class string
	jobTime    time.Duration
}

// bind declares the flags in fl, --fleet's usage being what it does.
func (f *fleetFlags) bind(fl *pflag.FlagSet, usage string) {
	fl.StringVar(&f.url, "fleet", "", usage)
	fl.StringVar(&f.class, "class", "", "with --fleet, the class of machines to measure on (default: this host's machine-id)")
	fl.DurationVar(&f.jobTime, "job-time", ab.DefaultJobTime, "with --fleet, a job's planned machine time: a job holds all the rounds of as many cases as fit, a case's rounds cut over jobs of at least 3 when they do not; shorter spreads a comparison of few cases over more agents")
}

// remote is the measurement on the fleet --fleet names (nil without
// it), on its agents of --class (default: this host's machine-id), and
// what the caller closes after.
func (a *app) remote(cmd *cobra.Command, f fleetFlags) (ab.Remote, io.Closer, error) {
	set := cmd.Flags().Changed
	switch {
	case f.url == "" && (set("class") || set("job-time")):
		return nil, nil, usageError(errors.New("--class and --job-time go with --fleet"))
	case f.url == "":
		return nil, nil, nil
	case f.jobTime <= 0:
		return nil, nil, usageError(fmt.Errorf("--job-time %s: want a positive duration", f.jobTime))
	case a.fleet == nil:
		return nil, nil, usageError(fmt.Errorf("--fleet: %s links no fleet client; ledgerbench's cmd/benchctl does", a.name))
	}
	if f.class == "" {
		f.class = hostcheck.Check(a.env().LocalHost()).MachineID
	}
	return a.fleet(cmd.Context(), ab.FleetOptions{URL: f.url, Class: f.class, JobTime: f.jobTime})
}

// adaptive binds --detect, --anyway and --budget into o: --detect plans
// rounds for a detectable change; --budget alone adds rounds to each case
// until its interval is within ±half the margin (narrow enough to decide
// it), as --precision would.
func (ab *abFlags) adaptive(cmd *cobra.Command, o *engine.Options, f *runFlags) error {
	set := cmd.Flags().Changed
	if ab.detect != "" && set("precision") {
		return usageError(errors.New("--detect and --precision: one goal at a time (--detect plans the rounds for a detectable change; --precision adds them until the interval is narrow)"))
	}
	if ab.detect != "" {
		d, err := percentArg("--detect", ab.detect, 100, false)
		if err != nil {
			return usageError(err)
		}
		o.Detect, o.Budget = d, f.budget
		if set("forks") && o.Forks < engine.DetectForks {
			return usageError(fmt.Errorf("--forks %d: --detect plans from at least %d rounds (the fewest its anytime-valid verdicts decide on)", o.Forks, engine.DetectForks))
		}
		o.Forks = max(o.Forks, engine.DetectForks)
	} else if ab.anyway {
		return usageError(errors.New("--anyway goes with --detect"))
	}
	if ab.untilDecided && (ab.detect != "" || set("precision")) {
		return usageError(errors.New("--until-decided and --detect or --precision: one goal at a time"))
	}
	if ab.untilDecided || set("budget") && o.Precision == 0 && o.Detect == 0 {
		if set("forks") && o.Forks < verdict.MinSamples {
			return usageError(fmt.Errorf("--forks %d: --until-decided looks at the rows from round %d on; --forks is the first rounds every row runs", o.Forks, verdict.MinSamples))
		}
		if !set("forks") {
			o.Forks = verdict.MinSamples
		}
		o.UntilDecided, o.Budget = true, f.budget
		return nil
	}
	o.Anyway = ab.anyway
	if (o.Detect > 0 || o.Precision > 0) && o.Forks < engine.PrecisionForks {
		return usageError(fmt.Errorf("--forks %d: adding rounds starts from at least %d", o.Forks, engine.PrecisionForks))
	}
	return nil
}

// showAB prints an A/B result: the pull-request table, the notes and the
// host under it, how many cases reached an adaptive goal, and each
// regression.
func (a *app) showAB(res *ab.Result, af *abFlags) error {
	var md bytes.Buffer
	if err := res.Markdown(&md); err != nil {
		return failedError(err.Error())
	}
	if af.json {
		if err := writeJSON(a.stdout, res.JSON()); err != nil {
			return failedError(fmt.Sprintf("writing the verdicts: %v", err))
		}
	} else {
		a.stdout.Write(md.Bytes())
	}
	if af.comment != "" {
		if err := atomicfile.Replace(af.comment, res.Comment(md.Bytes())); err != nil {
			return failedError(fmt.Sprintf("--comment: %v", err))
		}
		a.say("pull-request comment written to %s", af.comment)
	}
	o := res.Engine
	if reached, cases := ab.Reached(o, res.Runs); cases > 0 && (o.Detect > 0 || o.Precision > 0) {
		asked := fmt.Sprintf("an interval within ±%g %%", 100*o.Precision)
		if o.Detect > 0 {
			asked = fmt.Sprintf("a detectable change of %g %%", 100*o.Detect)
		}
		a.say("%d of %d cases reached %s in %s (budget %s)", reached, cases, asked, res.Runs[0].End.Sub(res.Runs[0].Start).Round(time.Second), o.Budget)
	}
	a.sayBudgetCut(res.Runs, o.Budget)
	if o.UntilDecided {
		a.reportUndecided(res, af.minChange)
	}
	a.reportRegressions(res.Regressions, res.Waived, af, res.Host.Pinned)
	return nil
}

// sayBudgetCut says when the budget stopped a run within its first
// rounds: the forks took longer than planned (a setup the plan does not
// see, say), and a row left with fewer than verdict.MinSamples pairs
// has no interval.
func (a *app) sayBudgetCut(runs []*result.Run, budget time.Duration) {
	if len(runs) == 0 || runs[0].BudgetRounds == 0 {
		return
	}
	run := runs[0]
	round := run.End.Sub(run.Start) / time.Duration(run.BudgetRounds)
	a.say("--budget %s: %d of the first %d rounds fit (about %s a round, longer than planned); a row with fewer than %d pairs has no interval",
		budget, run.BudgetRounds, run.Config.Forks, round.Round(100*time.Millisecond), verdict.MinSamples)
}

// reportUndecided says how many rows --until-decided decided, in what
// time, and why each other one is not: its confidence sequence is
// neither beyond ±min-change nor inside it.
func (a *app) reportUndecided(res *ab.Result, minChange float64) {
	var undecided []string
	for _, name := range res.Cases {
		if res.Tables.Decided(name) {
			continue
		}
		why := "no decision (failed forks or no ratio)"
		for _, d := range res.Tables.CaseDecisions(name) {
			if d.Err == nil && d.Verdict == verdict.Unknown {
				ch := d.Change
				why = fmt.Sprintf("%+.2f %% [%+.2f, %+.2f] after %d rounds: the sequence neither excludes no change beyond ±%g %% nor lies within it", ch.Pct(), (ch.Lo-1)*100, (ch.Hi-1)*100, ch.N, minChange)
			}
		}
		undecided = append(undecided, fmt.Sprintf("%s: %s", name, why))
	}
	a.say("--until-decided: %d of %d rows decided in %s (budget %s)", len(res.Cases)-len(undecided), len(res.Cases), res.Took.Round(time.Second), res.Engine.Budget)
	for _, u := range undecided {
		a.say("undecided %s", u)
	}
}

// reportRegressions names each regression, and on a host that is not
// pinned says what an unconfirmed one may be.
func (a *app) reportRegressions(regs []compare.Regression, waived []ab.Waived, af *abFlags, pinned bool) {
	for _, r := range regs {
		ch := r.Decision.Change
		a.say("REGRESSION %s %s: %s (p=%.3g q=%.3g)", r.Benchmark, r.Unit, ch.Interval(), ch.P, r.Decision.Q)
	}
	for _, w := range waived {
		a.say("regression %s %s: %s, not failing: %s", w.Benchmark, w.Unit, w.Decision.Change.Interval(), w.Why)
	}
	if len(regs) > 0 && !af.confirm && !pinned {
		// The verdicts hold the false-discovery rate at α across the
		// rows (results/calibration measures it); a second run makes a
		// false finding that much rarer again.
		a.say("the host is not pinned: of the rows called changed, up to %.0f in 100 may be false at a false-discovery rate of %g; --confirm reruns the A/B and keeps only the regressions found twice", 100*af.alpha, af.alpha)
	}
}
