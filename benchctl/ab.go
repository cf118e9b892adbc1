package benchctl

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// abForks is ab's default fork count per side.
const abForks = 5

// abFlags are the flags of `ab` beyond the run flags.
type abFlags struct {
	base, head, cmd     string
	allowDirty, confirm bool
	minChange, alpha    float64
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

Each fork is one sample of the comparison (the median of its iterations), so ab runs 5 forks
per side unless --forks says otherwise: the test cannot reach p < 0.05 with fewer than 4 a side.

--head . (the default) measures the working tree as it is. Exit status 1 on a significant
regression of a time or throughput beyond --min-change (with --confirm, only if a second A/B run
finds it too), on a failed fork or on a revision that does not build.`,
		Example: fmt.Sprintf(`  %[1]s ab --base origin/main --head . --forks 5
  %[1]s ab --base origin/main ./internal/cache --bench Get
  %[1]s ab --base v0.1.0 --head HEAD --bench Insert --min-change 3 --confirm`, a.name),
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o, cases, err := a.planOrPackages(cmd, &f, args)
			if err != nil {
				return err
			}
			if err := forksWithoutProfiles(o, "ab needs forks: --forks 0 cannot run two binaries",
				"--prof is not supported by ab: profile each revision with run --prof"); err != nil {
				return err
			}
			if !cmd.Flags().Changed("forks") && !f.quick {
				// Each fork is one sample of the comparison: 3 a side can
				// never reach p < 0.05, 5 a side can reach 0.008.
				o.Forks = abForks
			}
			if ab.base == "" {
				return usageError{errors.New("--base is required")}
			}
			if err := checkStats(ab.alpha, ab.minChange); err != nil {
				return err
			}
			return a.doAB(cmd, o, cases, &f, &ab, args)
		},
	}
	a.addRunFlags(c, &f)
	a.addServerFlags(c)
	fl := c.Flags()
	fl.StringVar(&ab.base, "base", "", "the baseline revision")
	fl.StringVar(&ab.head, "head", ".", "the experiment revision, or . for the working tree")
	fl.StringVar(&ab.cmd, "cmd", "", "the benchmark program's main package (default: the one this binary was built from)")
	fl.BoolVar(&ab.allowDirty, "allow-dirty", false, "with --head HEAD, measure HEAD even though the working tree has uncommitted changes")
	fl.BoolVar(&ab.confirm, "confirm", false, "confirm a regression with a second A/B run before failing")
	fl.Float64Var(&ab.minChange, "min-change", 0, "ignore changes smaller than this many percent")
	fl.Float64Var(&ab.alpha, "alpha", 0.05, "significance level")
	return c
}

// git runs git without a shell in dir.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// revision is one side to build.
type revision struct {
	name   string // baseline or experiment
	rev    string // as given
	commit string
	tree   bool // the working tree itself
}

func (a *app) srcDir() string {
	if a.dir == "" {
		return "."
	}
	return a.dir
}

// repoRoot is the top of the git repository holding the user's tree.
func (a *app) repoRoot() (string, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return "", errors.New("git is not installed")
	}
	root, err := git(a.srcDir(), "rev-parse", "--show-toplevel")
	if err != nil {
		abs, _ := filepath.Abs(a.srcDir())
		return "", fmt.Errorf("%s is not in a git repository: run this inside the repository whose revisions to compare", abs)
	}
	return root, nil
}

func (a *app) resolveRevisions(root string, ab *abFlags) (sides [2]revision, err error) {
	resolve := func(rev string) (string, error) {
		if strings.HasPrefix(rev, "-") {
			return "", fmt.Errorf("revision %q: must not start with -", rev)
		}
		c, err := git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
		if err != nil || c == "" {
			return "", fmt.Errorf("revision %q does not exist in %s", rev, root)
		}
		return c, nil
	}
	sides[0] = revision{name: "baseline", rev: ab.base}
	if sides[0].commit, err = resolve(ab.base); err != nil {
		return sides, err
	}
	sides[1] = revision{name: "experiment", rev: ab.head}
	head, err := resolve("HEAD")
	if err != nil {
		return sides, err
	}
	if ab.head == "." {
		// Untracked files are compiled in too: they make the tree dirty.
		dirty, err := git(root, "status", "--porcelain")
		if err != nil {
			return sides, err
		}
		sides[1].commit, sides[1].tree = head, true
		if dirty != "" {
			sides[1].commit += "+dirty"
		}
		return sides, nil
	}
	if sides[1].commit, err = resolve(ab.head); err != nil {
		return sides, err
	}
	dirty, err := git(root, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return sides, err
	}
	if sides[1].commit == head && dirty != "" && !ab.allowDirty {
		return sides, fmt.Errorf("--head %s is HEAD and the working tree has uncommitted changes: commit them, measure the working tree with --head ., or pass --allow-dirty", ab.head)
	}
	return sides, nil
}

// worktreeRE matches the worktrees ab and nightly make for the revisions
// they build.
var worktreeRE = regexp.MustCompile(`/benchctl-(ab|nightly)-[^/]+/(baseline|experiment)-src$`)

// removeStaleWorktrees removes the revision worktrees that an ab or nightly
// killed before its cleanup left registered. The caller holds the run
// lock, so no other ab is using them.
func removeStaleWorktrees(root string) {
	list, err := git(root, "worktree", "list", "--porcelain")
	if err != nil {
		return
	}
	for line := range strings.SplitSeq(list, "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok && worktreeRE.MatchString(filepath.ToSlash(p)) {
			_, _ = git(root, "worktree", "remove", "--force", p)
		}
	}
	_, _ = git(root, "worktree", "prune")
}

// built is one revision's benchmark program.
type built struct {
	rev     revision
	modDir  string // the program's module directory in the revision's tree
	bin     string // "" when the revision lacks the program
	benches []listed
	// overlay lists the files taken from the experiment, when any were.
	overlay []string
}

// checkout makes r's tree available under work (a worktree, or the
// working tree itself) and returns the program's module directory in it.
func checkout(root, work string, p *program, r revision, cleanups *[]func()) (string, error) {
	src := root
	if !r.tree {
		src = filepath.Join(work, r.name+"-src")
		if _, err := git(root, "worktree", "add", "--detach", src, r.commit); err != nil {
			return "", err
		}
		*cleanups = append(*cleanups, func() { _, _ = git(root, "worktree", "remove", "--force", src) })
	}
	return filepath.Join(src, p.moduleRel), nil
}

// goBuild builds the main package pkgRel of the module in modDir into bin.
func goBuild(modDir, pkgRel, bin, overlay string) error {
	args := []string{"build", "-o", bin}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.Command("go", append(args, "./"+filepath.ToSlash(pkgRel))...)
	cmd.Dir = modDir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// buildPair builds the experiment, then the baseline; when the baseline
// lacks the program or one of the planned benchmarks, it builds the
// baseline's code with the experiment's declarations overlaid. It returns
// the notes that say what it did.
func (a *app) buildPair(root, work string, p *program, revs [2]revision, cases []engine.Case, cleanups *[]func()) (base, head *built, notes []string, err error) {
	return a.buildBase(root, work, p, revs[0], &built{rev: revs[1]}, cases, cleanups)
}

// buildBase builds the baseline against head, building head first unless
// it is already built (its bin and benches set).
func (a *app) buildBase(root, work string, p *program, baseRev revision, head *built, cases []engine.Case, cleanups *[]func()) (base, _ *built, notes []string, err error) {
	base = &built{rev: baseRev}
	for _, b := range []*built{head, base} {
		if b.modDir, err = checkout(root, work, p, b.rev, cleanups); err != nil {
			return nil, nil, nil, failedError{err.Error()}
		}
		if b.bin != "" {
			continue // this very program
		}
		a.say("building %s %s (%s) of %s", b.rev.name, b.rev.rev, shortCommit(b.rev.commit), p.importPath)
		if files, _ := goFiles(filepath.Join(b.modDir, p.pkgRel), true); len(files) == 0 && b == base {
			continue // the baseline predates the program: overlaid below
		}
		b.bin = filepath.Join(work, b.rev.name)
		if err := goBuild(b.modDir, p.pkgRel, b.bin, ""); err != nil {
			return nil, nil, nil, failedError{fmt.Sprintf("%s %s does not build: %v", b.rev.name, b.rev.rev, err)}
		}
		if b.benches, err = listBenchmarks(b.bin); err != nil && b == head {
			return nil, nil, nil, failedError{err.Error()}
		}
	}
	var reason string
	switch missing := missingIDs(cases, base.benches); {
	case base.bin == "":
		reason = "lacks the benchmark program " + p.importPath
	case base.benches == nil:
		reason = "cannot list its benchmarks"
	case len(missing) > 0:
		reason = "lacks " + strings.Join(missing, ", ")
	}
	baseOnly := onlyIn(base.benches, head.benches)
	if reason != "" {
		replace, files, err := declarationOverlay(p, head.modDir, base.modDir)
		if err != nil {
			return nil, nil, nil, failedError{err.Error()}
		}
		path := filepath.Join(work, "overlay.json")
		if err := writeOverlay(path, replace); err != nil {
			return nil, nil, nil, failedError{err.Error()}
		}
		base.bin, base.overlay = filepath.Join(work, base.rev.name), files
		if err := goBuild(base.modDir, p.pkgRel, base.bin, path); err != nil {
			return nil, nil, nil, failedError{fmt.Sprintf("baseline %s %s, and does not build with the experiment's benchmark declarations overlaid: %v", base.rev.rev, reason, err)}
		}
		notes = append(notes, fmt.Sprintf("baseline %s %s: its code is measured with the experiment's benchmark declarations overlaid (%s)",
			shortCommit(base.rev.commit), reason, strings.Join(files, " ")))
		if base.benches, err = listBenchmarks(base.bin); err != nil {
			return nil, nil, nil, failedError{err.Error()}
		}
	}
	if len(baseOnly) > 0 {
		notes = append(notes, "only in the baseline, not measured: "+strings.Join(baseOnly, ", "))
	}
	if headOnly := onlyIn(head.benches, base.benches); len(headOnly) > 0 {
		notes = append(notes, "only in the experiment, not measured: "+strings.Join(headOnly, ", "))
	}
	return base, head, notes, nil
}

// missingIDs are the planned benchmarks that have no declaration in l.
func missingIDs(cases []engine.Case, l []listed) []string {
	var out []string
	for _, c := range cases {
		name := c.Bench.FullName()
		if !slices.ContainsFunc(l, func(b listed) bool { return b.ID == c.Bench.ID() }) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// onlyIn lists the benchmarks of a that b lacks.
func onlyIn(a, b []listed) []string {
	var out []string
	for _, x := range a {
		if !slices.ContainsFunc(b, func(y listed) bool { return y.ID == x.ID }) {
			out = append(out, x.Name)
		}
	}
	return out
}

// runnable keeps the cases that both sides declare.
func runnable(cases []engine.Case, sides ...*built) []engine.Case {
	var out []engine.Case
	for _, c := range cases {
		ok := true
		for _, s := range sides {
			ok = ok && slices.ContainsFunc(s.benches, func(l listed) bool { return l.ID == c.Bench.ID() })
		}
		if ok {
			out = append(out, c)
		}
	}
	return out
}

func (a *app) doAB(cmd *cobra.Command, o engine.Options, cases []engine.Case, f *runFlags, ab *abFlags, patterns []string) error {
	root, err := a.repoRoot()
	if err != nil {
		return usageError{err}
	}
	revs, err := a.resolveRevisions(root, ab)
	if err != nil {
		return usageError{err}
	}
	var prog *program
	if len(patterns) == 0 {
		if prog, err = findProgram(a.srcDir(), root, ab.cmd); err != nil {
			return usageError{err}
		}
	} else if ab.cmd != "" {
		return usageError{fmt.Errorf("--cmd names a benchmark program; with package arguments ab builds their test binaries")}
	}
	s, err := a.prepare(&o, f)
	if err != nil {
		return err
	}
	defer s.release()
	out, err := f.outDir("ab")
	if err != nil {
		return err
	}
	if !f.ignoreLock {
		removeStaleWorktrees(root) // of an earlier ab or nightly that was killed
	}
	work, err := os.MkdirTemp("", "benchctl-ab-")
	if err != nil {
		return failedError{err.Error()}
	}
	defer os.RemoveAll(work)
	var cleanups []func()
	defer func() {
		for _, c := range cleanups {
			c()
		}
	}()
	var sides []engine.Side
	var notes, broken []string
	if len(patterns) > 0 {
		tp, err := a.buildTestPair(cmd.Context(), root, work, revs, o, patterns, &cleanups)
		if err != nil {
			return err
		}
		sides, cases, notes, broken = tp.sides, tp.cases, tp.notes, tp.broken
	} else {
		base, head, n, err := a.buildPair(root, work, prog, revs, cases, &cleanups)
		if err != nil {
			return err
		}
		notes = n
		cases = runnable(cases, base, head)
		sides = []engine.Side{{Name: "baseline", Executable: base.bin}, {Name: "experiment", Executable: head.bin}}
	}
	for _, n := range notes {
		a.say("%s", n)
	}
	if len(cases) == 0 {
		return failedError{"no selected benchmark is declared by both revisions"}
	}
	// runAB measures both sides and returns the comparison, computed from
	// the A/B file's contents before the file is written (so a write that
	// fails loses no table), with the run's error.
	runAB := func(seed uint64, file string) (*compare.Tables, bool, error) {
		o.Seed = seed
		var ts *compare.Tables
		path := filepath.Join(out, file)
		_, failed, err := a.runSides(cmd, o, cases, s, root, revs[:], sides, path, filepath.Join(out, "logs"), notes, replaceFile,
			func(data []byte) error {
				t, err := compare.BuildData(path, data, compare.Options{Col: "toolchain", MinChange: ab.minChange, Alpha: ab.alpha})
				if err != nil {
					return failedError{err.Error()}
				}
				ts = t
				return nil
			})
		return ts, failed, err
	}
	ts, failed, err := runAB(o.Seed, "ab.txt")
	if ts == nil {
		return err
	}
	names := []string{fmt.Sprintf("baseline (%s)", shortCommit(revs[0].commit)), fmt.Sprintf("experiment (%s)", shortCommit(revs[1].commit))}
	if err := ts.Markdown(a.stdout, names); err != nil {
		return failedError{err.Error()}
	}
	if err != nil {
		return err // the table is shown; ab.txt could not be written
	}
	for _, n := range notes {
		fmt.Fprintf(a.stdout, "\n> %s\n", n)
	}
	check := s.check
	fmt.Fprintf(a.stdout, "\n<details><summary>host: %s</summary>\n\n", check.Verdict())
	for _, reason := range check.Reasons {
		fmt.Fprintf(a.stdout, "- %s\n", reason)
	}
	fmt.Fprintf(a.stdout, "\nmachine-id %s, env-id %s, %s; seed %d, %d forks per side, warmup %s, measure %s; raw results: %s\n</details>\n",
		check.MachineID, check.EnvID, check.Facts.Brand, o.Seed, o.Forks, o.Warmup, o.Measure, filepath.Join(out, "ab.txt"))
	regs := ts.Regressions()
	if len(regs) > 0 && ab.confirm {
		a.say("%d possible regression(s); confirming with a second A/B run", len(regs))
		again, failedAgain, err := runAB(o.Seed+1, "ab-confirm.txt")
		if err != nil {
			return err
		}
		failed = failed || failedAgain
		confirmed := map[string]bool{}
		for _, r := range again.Regressions() {
			confirmed[r.Unit+" "+r.Benchmark] = true
		}
		var kept []compare.Regression
		for _, r := range regs {
			if confirmed[r.Unit+" "+r.Benchmark] {
				kept = append(kept, r)
			}
		}
		regs = kept
	}
	for _, r := range regs {
		a.say("REGRESSION %s %s: %+.1f %% (%s)", r.Benchmark, r.Unit, (r.Ratio-1)*100, r.Comparison.String())
	}
	if len(regs) > 0 && !ab.confirm && !check.Pinned {
		// Calibrated on an unpinned VM, the fork-level test keeps its
		// false positives near α (results/calibration), so confirmation
		// is not the default; at α = 0.05 one comparison in twenty is
		// still a false alarm, which a second run makes one in 400.
		a.say("the host is not pinned: at α = %g about %.0f in 100 unchanged benchmarks still look changed; --confirm reruns the A/B and keeps only the regressions found twice", ab.alpha, 100*ab.alpha)
	}
	switch {
	case failed:
		return failedError{"a fork failed; every result obtained is in " + out}
	case len(broken) > 0:
		return failedError{fmt.Sprintf("%d package(s) did not build (%s); every result obtained is in %s", len(broken), strings.Join(broken, ", "), out)}
	case len(regs) > 0:
		return failedError{fmt.Sprintf("%d significant regression(s) beyond --min-change %g %%", len(regs), ab.minChange)}
	}
	return nil
}

func shortCommit(c string) string {
	if len(c) > 12 && !strings.Contains(c[:12], "+") {
		return c[:12]
	}
	return c
}

// replaceFile writes data to path, replacing what is there atomically.
func replaceFile(path string, data []byte) (string, error) {
	return path, report.WriteFileAtomic(path, data)
}

// runSides runs the sides interleaved and writes their A/B file (or, for
// one side, a plain results file) to path with write, which returns the
// path it wrote; shown, when set, gets the file's contents first, so what
// was measured is shown even when the file cannot be written. It returns
// whether a fork failed.
func (a *app) runSides(cmd *cobra.Command, o engine.Options, cases []engine.Case, s *session, root string,
	revs []revision, sides []engine.Side, path, logDir string, notes []string,
	write func(string, []byte) (string, error), shown func([]byte) error) (string, bool, error) {
	prog := newProgress(a.stderr)
	rn := &engine.Runner{LogDir: logDir, Progress: prog.event, CPUs: o.CPUs, BeforeFork: s.beforeFork}
	runs, runErr := rn.RunSides(cmd.Context(), o, cases, sides)
	prog.close()
	if runs == nil {
		return "", false, failedError{runErr.Error()}
	}
	h := s.header(root)
	h.Notes = notes
	if len(revs) == 2 {
		h.BaselineCommit, h.ExperimentCommit = revs[0].commit, revs[1].commit
	}
	var fileSides []report.Side
	failed := false
	for i, r := range runs {
		hs := h
		if len(revs) == 2 {
			hs.Toolchain = revs[i].name
		}
		fileSides = append(fileSides, report.Side{Header: hs, Run: r})
	}
	var buf bytes.Buffer
	if err := report.WriteSides(&buf, fileSides); err != nil {
		return "", failed, failedError{err.Error()}
	}
	for _, r := range runs {
		if a.reportFailures(r) > 0 {
			failed = true
		}
	}
	if shown != nil {
		if err := shown(buf.Bytes()); err != nil {
			return "", failed, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", failed, failedError{fmt.Sprintf("%v (the results were not written)", err)}
	}
	path, err := write(path, buf.Bytes())
	if err != nil {
		return "", failed, failedError{fmt.Sprintf("%v (the results were not written)", err)}
	}
	a.written = append(a.written, path)
	if runErr != nil {
		return path, failed, failedError{fmt.Sprintf("run interrupted: %v (results so far are in %s)", runErr, path)}
	}
	return path, failed, nil
}
