package benchctl

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/profile"
	"github.com/ledgerbench/ledgerbench/internal/revision"
)

// abFlags are the flags of `ab` beyond the run flags.
type abFlags struct {
	base, head, cmd             string
	allowDirty, confirm, anyway bool
	minChange, alpha            float64
	detect                      string
}

func (a *app) abCmd() *cobra.Command {
	var f runFlags
	var ab abFlags
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

Each fork is one sample (the median of its iterations), and each round's two forks are one pair:
the change is the geometric mean of the pairs' ratios, with its interval. Every row gets a verdict
at the false-discovery rate --alpha across the rows of its unit: changed (significant, and at least
--min-change), same (the interval within ±--min-change) or unknown, and the smallest change its
samples could detect at 80 % power. ab runs ` + fmt.Sprint(engine.ABForks) + ` rounds unless --forks (or --quick) says
otherwise, ` + fmt.Sprint(engine.DuetForks) + ` with --duet, whose rounds take half the machine time.

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
			o, cases, err := a.planOrPackages(cmd, &f, args)
			if err != nil {
				return err
			}
			if o.Duet && !cmd.Flags().Changed("forks") && !f.quick {
				o.Forks = engine.DuetForks
			}
			if err := abProfiles(o); err != nil {
				return err
			}
			if ab.base == "" {
				return usageError{errors.New("--base is required")}
			}
			if err := checkStats(ab.alpha, ab.minChange); err != nil {
				return err
			}
			if err := ab.adaptive(cmd, &o, &f); err != nil {
				return err
			}
			return a.doAB(cmd, o, cases, &f, &ab, args)
		},
	}
	a.addRunFlags(c, &f, engine.ABOptions())
	c.Flags().Lookup("prof").Usage = "instructions: count each case's instructions per op under callgrind (one fork a side, after the rounds) and set their change beside the time's"
	a.addServerFlags(c)
	fl := c.Flags()
	fl.StringVar(&ab.base, "base", "", "the baseline revision")
	fl.StringVar(&ab.head, "head", ".", "the experiment revision, or . for the working tree")
	fl.StringVar(&ab.cmd, "cmd", "", "the benchmark program's main package (default: the one this binary was built from)")
	fl.BoolVar(&ab.allowDirty, "allow-dirty", false, "with --head HEAD, measure HEAD even though the working tree has uncommitted changes")
	fl.BoolVar(&f.duet, "duet", false, "run each round's two forks at the same time, each pinned to half of the CPUs (swapped every round), so the host's noise hits both and each round's pair cancels it")
	fl.StringVar(&ab.detect, "detect", "", "plan for this smallest detectable change (2%): after the first --forks rounds, refuse (exit 2) when a case needs more rounds than --budget leaves, else add rounds to each case until it can detect it")
	fl.BoolVar(&ab.anyway, "anyway", false, "with --detect, measure within --budget even when the plan says it cannot be reached")
	fl.BoolVar(&ab.confirm, "confirm", false, "confirm a regression with a second A/B run before failing")
	fl.Float64Var(&ab.minChange, "min-change", compare.DefaultMinChange, "the margin of the verdicts, in percent: a smaller change is none, and an interval within ± it is \"same\"")
	fl.Float64Var(&ab.alpha, "alpha", 0.05, "significance level")
	return c
}

func (a *app) srcDir() string {
	if a.dir == "" {
		return "."
	}
	return a.dir
}

// openRepo is the repository of the user's tree.
func (a *app) openRepo() (*revision.Repo, error) {
	repo, err := revision.Open(a.srcDir())
	if err != nil {
		return nil, revisionError(err)
	}
	return repo, nil
}

// findProgram locates the benchmark program to build per revision:
// --cmd, else the main package this binary was built from.
func (a *app) findProgram(repo *revision.Repo, cmdFlag string) (*revision.Program, error) {
	p, err := revision.FindProgram(a.srcDir(), repo.Root, cmdFlag)
	switch {
	case errors.Is(err, revision.ErrUnknownProgram):
		return nil, usageError{fmt.Errorf("%w: name it with --cmd ./path/to/main", err)}
	case err != nil && cmdFlag != "":
		return nil, usageError{fmt.Errorf("--cmd %w", err)}
	case err != nil:
		return nil, revisionError(err)
	}
	return p, nil
}

// resolvePair resolves --base and --head.
func (a *app) resolvePair(repo *revision.Repo, ab *abFlags) ([2]revision.Revision, error) {
	revs, err := repo.Pair(ab.base, ab.head, ab.allowDirty)
	if errors.Is(err, revision.ErrDirtyHead) {
		return revs, usageError{fmt.Errorf("--head %w: commit them, measure the working tree with --head ., or pass --allow-dirty", err)}
	}
	if err != nil {
		return revs, revisionError(err)
	}
	return revs, nil
}

// workspace is a command's build directory for revisions, after removing
// the worktrees of an earlier command that was killed (the run lock is
// held, unless --ignore-lock, so none is in use).
func (a *app) workspace(repo *revision.Repo, kind string, f *runFlags) (*revision.Workspace, error) {
	if !f.ignoreLock {
		repo.RemoveStaleWorktrees()
	}
	ws, err := repo.NewWorkspace(kind, a.say)
	if err != nil {
		return nil, failedError{err.Error()}
	}
	return ws, nil
}

// sideSet is what a command built to run: its sides, the cases every
// side has, and the notes and broken packages of the builds.
type sideSet struct {
	sides         []engine.Side
	cases         []engine.Case
	revs          []revision.Revision
	notes, broken []string
	// headCases counts the selected benchmarks the experiment declares,
	// whether or not the baseline has them: 0 is a selection that
	// matches nothing at the experiment.
	headCases int
}

// pairSides builds two revisions' sides in ws: the packages' test
// binaries, or the benchmark program (the experiment is self when it is
// this very binary).
func (a *app) pairSides(ctx context.Context, ws *revision.Workspace, revs [2]revision.Revision, prog *revision.Program, self *revision.Built,
	cases []engine.Case, o engine.Options, patterns []string) (*sideSet, error) {
	set := &sideSet{revs: revs[:]}
	if len(patterns) > 0 {
		tp, err := ws.BuildTestPair(ctx, a.srcDir(), revs, testSpec(o), patterns)
		if err != nil {
			return nil, revisionError(err)
		}
		set.sides, set.cases, set.notes, set.broken, set.headCases = tp.Sides, tp.Cases, tp.Notes, tp.Broken, tp.HeadCases
	} else {
		head := self
		if head == nil {
			head = &revision.Built{Rev: revs[1]}
		}
		base, head, notes, err := ws.BuildBase(prog, revs[0], head, cases)
		if err != nil {
			return nil, failedError{err.Error()}
		}
		set.notes, set.cases, set.headCases = notes, revision.Runnable(cases, base, head), len(revision.Runnable(cases, head))
		set.sides = []engine.Side{{Name: "baseline", Launch: engine.Program{Executable: base.Bin}}, {Name: "experiment", Launch: engine.Program{Executable: head.Bin}}}
	}
	for _, n := range set.notes {
		a.say("%s", n)
	}
	return set, nil
}

func (a *app) doAB(cmd *cobra.Command, o engine.Options, cases []engine.Case, f *runFlags, ab *abFlags, patterns []string) error {
	repo, err := a.openRepo()
	if err != nil {
		return err
	}
	revs, err := a.resolvePair(repo, ab)
	if err != nil {
		return err
	}
	var prog *revision.Program
	if len(patterns) == 0 {
		if prog, err = a.findProgram(repo, ab.cmd); err != nil {
			return err
		}
	} else if ab.cmd != "" {
		return usageError{fmt.Errorf("--cmd names a benchmark program; with package arguments ab builds their test binaries")}
	}
	s, err := a.prepare(cmd.Context(), &o, f)
	if err != nil {
		return err
	}
	defer s.release()
	if err := checkDuet(o); err != nil {
		return err
	}
	out, err := f.outDir("ab")
	if err != nil {
		return err
	}
	ws, err := a.workspace(repo, "ab", f)
	if err != nil {
		return err
	}
	defer ws.Close()
	set, err := a.pairSides(cmd.Context(), ws, revs, prog, nil, cases, o, patterns)
	if err != nil {
		return err
	}
	if len(set.cases) == 0 && set.headCases == 0 && len(set.broken) == 0 {
		return usageError{fmt.Errorf("the selection (--bench %q) matches no benchmark of the experiment %s", o.Bench, revision.Short(set.revs[1].Commit))}
	}
	if len(set.cases) == 0 {
		return failedError{"no selected benchmark is declared by both revisions"}
	}
	return a.compareSides(cmd.Context(), s, o, set, ab, repo.Root, out)
}

// compareSides runs an A/B of set's two sides, prints the pull-request
// table, confirms its regressions when asked, and ends with ab's exit
// status.
func (a *app) compareSides(ctx context.Context, s *session, o engine.Options, set *sideSet, ab *abFlags, root, out string) error {
	runAB := func(seed uint64, file string) (*compare.Tables, *measured, error) {
		o := o
		o.Seed = seed
		path := filepath.Join(out, file)
		var ts *compare.Tables
		r, err := a.measure(ctx, s, &measurement{o: o, cases: set.cases, sides: set.sides, revs: set.revs, notes: set.notes,
			dir: root, logDir: filepath.Join(out, "logs"), profileDir: filepath.Join(out, "profiles"), out: resultsFile{path, replaceFile},
			before: func(r *measured) error {
				t, err := compare.BuildData(path, r.data, compare.ABOptions(ab.alpha, ab.minChange))
				if err != nil {
					return failedError{err.Error()}
				}
				ts = t
				return nil
			}})
		if err == nil && r.interrupted != nil {
			err = r.interrupted
		}
		return ts, r, err
	}
	ts, r, err := runAB(o.Seed, "ab.txt")
	if ts == nil {
		return err
	}
	names := []string{fmt.Sprintf("baseline (%s)", revision.Short(set.revs[0].Commit)), fmt.Sprintf("experiment (%s)", revision.Short(set.revs[1].Commit))}
	if err := ts.Markdown(a.stdout, names); err != nil {
		return failedError{err.Error()}
	}
	if err != nil {
		return err // the table is shown; ab.txt could not be written
	}
	a.printABDetails(s, o, set.notes, filepath.Join(out, "ab.txt"))
	a.reportAdaptive(o, r.runs)
	regs := ts.Regressions()
	failed := r.failed
	if len(regs) > 0 && ab.confirm {
		a.say("%d possible regression(s); confirming with a second A/B run", len(regs))
		again, r2, err := runAB(o.Seed+1, "ab-confirm.txt")
		if err != nil {
			return err
		}
		failed += r2.failed
		regs = confirmed(regs, again.Regressions())
	}
	a.reportRegressions(regs, ab, s.check.Pinned)
	r.failed = failed
	if err := r.outcome(set.broken, out); err != nil {
		return err
	}
	if len(regs) > 0 {
		return failedError{fmt.Sprintf("%d significant regression(s) beyond --min-change %g %%", len(regs), ab.minChange)}
	}
	return nil
}

// abProfiles refuses what ab cannot run: no forks, or a profiler other
// than instructions (whose counts the table puts beside the time; the
// other profiles are for run --prof, one revision at a time).
func abProfiles(o engine.Options) error {
	if o.Forks == 0 {
		return usageError{errors.New("ab needs forks: --forks 0 cannot run two binaries")}
	}
	for _, k := range o.Profiles {
		if k != profile.Instructions {
			return usageError{fmt.Errorf("--prof %s is not supported by ab: ab counts instructions (--prof instructions) to set beside the time; profile each revision with run --prof", k)}
		}
	}
	return nil
}

// adaptive binds --detect, --anyway and --budget into o: --detect plans
// rounds for a detectable change; --budget alone adds rounds to each case
// until its interval is within ±half the margin (narrow enough to decide
// it), as --precision would.
func (ab *abFlags) adaptive(cmd *cobra.Command, o *engine.Options, f *runFlags) error {
	set := cmd.Flags().Changed
	if ab.detect != "" && set("precision") {
		return usageError{errors.New("--detect and --precision: one goal at a time (--detect plans the rounds for a detectable change; --precision adds them until the interval is narrow)")}
	}
	if ab.detect != "" {
		d, err := percentArg("--detect", ab.detect, 100, false)
		if err != nil {
			return usageError{err}
		}
		o.Detect, o.Budget = d, f.budget
		if set("forks") && o.Forks < engine.DetectForks {
			return usageError{fmt.Errorf("--forks %d: --detect plans from at least %d rounds (from fewer, a comparison stopped when its rounds happen to spread little finds changes that are not there)", o.Forks, engine.DetectForks)}
		}
		o.Forks = max(o.Forks, engine.DetectForks)
	} else if ab.anyway {
		return usageError{errors.New("--anyway goes with --detect")}
	}
	if set("budget") && o.Precision == 0 && o.Detect == 0 {
		if ab.minChange == 0 {
			return usageError{errors.New("--budget adds rounds until each case's interval is within ±half of --min-change: give --min-change, --precision or --detect")}
		}
		o.Precision, o.Budget = ab.minChange/200, f.budget
	}
	o.Anyway = ab.anyway
	if (o.Detect > 0 || o.Precision > 0) && o.Forks < engine.PrecisionForks {
		return usageError{fmt.Errorf("--forks %d: adding rounds starts from at least %d", o.Forks, engine.PrecisionForks)}
	}
	return nil
}

// reportAdaptive says, after an A/B run that added rounds, how many
// cases reached what was asked.
func (a *app) reportAdaptive(o engine.Options, runs []*result.Run) {
	if len(runs) != 2 || (o.Detect == 0 && o.Precision == 0) {
		return
	}
	asked := fmt.Sprintf("an interval within ±%g %%", 100*o.Precision)
	if o.Detect > 0 {
		asked = fmt.Sprintf("a detectable change of %g %%", 100*o.Detect)
	}
	reached := 0
	for i := range runs[0].Cases {
		if engine.Precise(o, runs, i) {
			reached++
		}
	}
	a.say("%d of %d cases reached %s in %s (budget %s)", reached, len(runs[0].Cases), asked, runs[0].End.Sub(runs[0].Start).Round(time.Second), o.Budget)
}

// printABDetails prints the notes and the host under the table.
func (a *app) printABDetails(s *session, o engine.Options, notes []string, file string) {
	for _, n := range notes {
		fmt.Fprintf(a.stdout, "\n> %s\n", n)
	}
	check := s.check
	fmt.Fprintf(a.stdout, "\n<details><summary>host: %s</summary>\n\n", check.Verdict())
	for _, reason := range check.Reasons {
		fmt.Fprintf(a.stdout, "- %s\n", reason)
	}
	fmt.Fprintf(a.stdout, "\nmachine-id %s, env-id %s, %s; seed %d, %d forks per side, warmup %s, measure %s; raw results: %s\n",
		check.MachineID, check.EnvID, check.Facts.Brand, o.Seed, o.Forks, o.Warmup, o.Measure, file)
	fmt.Fprintf(a.stdout, "\n%s\n</details>\n", abMode(o))
}

// abMode says how the sides of an A/B run ran, and why.
func abMode(o engine.Options) string {
	if o.Duet {
		halves, _ := engine.DuetCPUs(o.CPUs)
		return fmt.Sprintf("mode: duet (--duet): each round ran both sides' forks at the same time, one on CPUs %v and one on CPUs %v, swapped every round; "+
			"each round's pair shares the host's noise, and what the sides share without splitting (caches, memory bandwidth) an A/A duet measures", halves[0], halves[1])
	}
	return "mode: interleaved (the default; --duet runs both sides at once): each round ran one side's fork after the other's, in a seeded order; the rounds pair them"
}

// checkDuet refuses --duet where it cannot pair: a side needs a CPU of
// its own.
func checkDuet(o engine.Options) error {
	if !o.Duet {
		return nil
	}
	if _, err := engine.DuetCPUs(o.CPUs); err != nil {
		return usageError{fmt.Errorf("--duet: %w", err)}
	}
	return nil
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

// reportRegressions names each regression, and on a host that is not
// pinned says what an unconfirmed one may be.
func (a *app) reportRegressions(regs []compare.Regression, ab *abFlags, pinned bool) {
	for _, r := range regs {
		ch := r.Decision.Change
		a.say("REGRESSION %s %s: %+.1f %% [%+.1f, %+.1f] (p=%.3g q=%.3g)", r.Benchmark, r.Unit, ch.Pct(), (ch.Lo-1)*100, (ch.Hi-1)*100, ch.P, r.Decision.Q)
	}
	if len(regs) > 0 && !ab.confirm && !pinned {
		// The verdicts hold the false-discovery rate at α across the
		// rows (results/calibration measures it); a second run makes a
		// false finding that much rarer again.
		a.say("the host is not pinned: of the rows called changed, up to %.0f in 100 may be false at a false-discovery rate of %g; --confirm reruns the A/B and keeps only the regressions found twice", 100*ab.alpha, ab.alpha)
	}
}
