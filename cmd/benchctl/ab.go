package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/hostcheck"
	"github.com/ledgerbench/ledgerbench/harness/report"
)

// abFlags are the flags of `benchctl ab` beyond the run flags.
type abFlags struct {
	base, head          string
	allowDirty, confirm bool
	minChange, alpha    float64
}

func (a *app) abCmd() *cobra.Command {
	var f runFlags
	var ab abFlags
	c := &cobra.Command{
		Use:   "ab --base REV [--head REV|.] [run flags]",
		Short: "Build two revisions and run their forks interleaved; print the pull-request table",
		Long: `ab builds cmd/benchctl of two revisions of this repository in git worktrees with the
same toolchain, runs every case's forks on both, interleaved (A B or B A per case and round, in a
seeded order recorded in the file), writes DIR/ab.txt whose only varying key is toolchain
(baseline|experiment), and prints the Markdown table for the pull request.

--head . (the default) measures the working tree as it is. Exit status 1 on a significant
regression of a time or throughput beyond --min-change (with --confirm, only if a second A/B run
finds it too) or on a failed fork.`,
		Example: `  benchctl ab --base origin/main --head . --suite dedup --forks 5
  benchctl ab --base v0.1.0 --head HEAD --bench Insert --min-change 3 --confirm`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := f.options(cmd)
			if err != nil {
				return usageError{err}
			}
			if o.Forks == 0 {
				return usageError{errors.New("ab needs forks: --forks 0 cannot run two binaries")}
			}
			if ab.base == "" {
				return usageError{errors.New("--base is required")}
			}
			return a.doAB(cmd, o, &f, &ab)
		},
	}
	addRunFlags(c, &f)
	fl := c.Flags()
	fl.StringVar(&ab.base, "base", "", "the baseline revision")
	fl.StringVar(&ab.head, "head", ".", "the experiment revision, or . for the working tree")
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

func (a *app) resolveRevisions(ab *abFlags) (root string, sides [2]revision, err error) {
	if _, err := exec.LookPath("git"); err != nil {
		return "", sides, errors.New("git is not installed")
	}
	dir := a.dir
	if dir == "" {
		dir = "."
	}
	if root, err = git(dir, "rev-parse", "--show-toplevel"); err != nil {
		return "", sides, fmt.Errorf("not in a git repository: %w", err)
	}
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
		return "", sides, err
	}
	sides[1] = revision{name: "experiment", rev: ab.head}
	dirty, err := git(root, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return "", sides, err
	}
	head, err := resolve("HEAD")
	if err != nil {
		return "", sides, err
	}
	if ab.head == "." {
		sides[1].commit, sides[1].tree = head, true
		if dirty != "" {
			sides[1].commit += "+dirty"
		}
		return root, sides, nil
	}
	if sides[1].commit, err = resolve(ab.head); err != nil {
		return "", sides, err
	}
	if sides[1].commit == head && dirty != "" && !ab.allowDirty {
		return "", sides, fmt.Errorf("--head %s is HEAD and the working tree has uncommitted changes: commit them, measure the working tree with --head ., or pass --allow-dirty", ab.head)
	}
	return root, sides, nil
}

// build builds cmd/benchctl of a revision into dir and returns the binary.
func build(root, dir string, r revision) (string, func(), error) {
	src := root
	cleanup := func() {}
	if !r.tree {
		src = filepath.Join(dir, r.name+"-src")
		if _, err := git(root, "worktree", "add", "--detach", src, r.commit); err != nil {
			return "", cleanup, err
		}
		cleanup = func() { _, _ = git(root, "worktree", "remove", "--force", src) }
	}
	bin := filepath.Join(dir, r.name)
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/benchctl")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", cleanup, fmt.Errorf("build %s (%s): %v\n%s", r.name, r.rev, err, out)
	}
	return bin, cleanup, nil
}

func (a *app) doAB(cmd *cobra.Command, o harness.Options, f *runFlags, ab *abFlags) error {
	if _, err := o.Plan(a.registry); err != nil {
		return usageError{err}
	}
	root, revs, err := a.resolveRevisions(ab)
	if err != nil {
		return usageError{err}
	}
	out := f.out
	if out == "" {
		out = filepath.Join("results", "ab", time.Now().UTC().Format("20060102T150405Z"))
	}
	if err := report.CheckWritable(out); err != nil {
		return usageError{err}
	}
	host := a.localHost()
	check := hostcheck.Check(host)
	if f.strict && !check.Pinned {
		return failedError{"--strict: refusing to run on a host that is not pinned: " + strings.Join(check.Reasons, "; ")}
	}
	if !f.ignoreLock {
		release, err := hostcheck.Lock(f.lockPath)
		if err != nil {
			return failedError{err.Error()}
		}
		defer release()
	}
	work, err := os.MkdirTemp("", "benchctl-ab-")
	if err != nil {
		return failedError{err.Error()}
	}
	defer os.RemoveAll(work)
	var sides []harness.Side
	for _, r := range revs {
		fmt.Fprintf(a.stderr, "benchctl: building %s %s (%s)\n", r.name, r.rev, shortCommit(r.commit))
		bin, cleanup, err := build(root, work, r)
		defer cleanup()
		if err != nil {
			return failedError{err.Error()}
		}
		sides = append(sides, harness.Side{Name: r.name, Executable: bin})
	}
	runAB := func(seed uint64, file string) (*compare.Tables, bool, error) {
		o.Seed = seed
		path, failed, err := a.runSides(cmd, o, f, root, check, host, revs[:], sides, filepath.Join(out, file), filepath.Join(out, "logs"))
		if err != nil {
			return nil, failed, err
		}
		ts, err := compare.Build([]string{path}, compare.Options{Col: "toolchain", MinChange: ab.minChange, Alpha: ab.alpha})
		if err != nil {
			return nil, failed, failedError{err.Error()}
		}
		return ts, failed, nil
	}
	ts, failed, err := runAB(o.Seed, "ab.txt")
	if err != nil {
		return err
	}
	names := []string{fmt.Sprintf("baseline (%s)", shortCommit(revs[0].commit)), fmt.Sprintf("experiment (%s)", shortCommit(revs[1].commit))}
	if err := ts.Markdown(a.stdout, names); err != nil {
		return failedError{err.Error()}
	}
	fmt.Fprintf(a.stdout, "\n<details><summary>host: %s</summary>\n\n", check.Verdict())
	for _, reason := range check.Reasons {
		fmt.Fprintf(a.stdout, "- %s\n", reason)
	}
	fmt.Fprintf(a.stdout, "\nmachine-id %s, env-id %s, %s; seed %d, %d forks per side, warmup %s, measure %s; raw results: %s\n</details>\n",
		check.MachineID, check.EnvID, check.Facts.Brand, o.Seed, o.Forks, o.Warmup, o.Measure, filepath.Join(out, "ab.txt"))
	regs := ts.Regressions()
	if len(regs) > 0 && ab.confirm {
		fmt.Fprintf(a.stderr, "benchctl: %d possible regression(s); confirming with a second A/B run\n", len(regs))
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
		fmt.Fprintf(a.stderr, "benchctl: REGRESSION %s %s: %+.1f %% (%s)\n", r.Benchmark, r.Unit, (r.Ratio-1)*100, r.Comparison.String())
	}
	switch {
	case failed:
		return failedError{"a fork failed; every result obtained is in " + out}
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

// runSides runs the sides interleaved and writes their A/B file (or, for
// one side, a plain results file) to path. It returns whether a fork
// failed.
func (a *app) runSides(cmd *cobra.Command, o harness.Options, f *runFlags, root string, check *hostcheck.Report,
	host *hostcheck.Host, revs []revision, sides []harness.Side, path, logDir string) (string, bool, error) {
	prog := newProgress(a.stderr)
	rn := &harness.Runner{Registry: a.registry, LogDir: logDir, Progress: prog.event, CPUs: o.CPUs,
		BeforeFork: a.beforeFork(host, f)}
	runs, runErr := rn.RunSides(cmd.Context(), o, sides)
	prog.close()
	if runs == nil {
		return "", false, usageError{runErr}
	}
	h := report.CollectHeader(root, "benchctl "+strings.Join(a.args, " "))
	h.MachineID, h.EnvID, h.HostPinned, h.HostNote = check.MachineID, check.EnvID, "no", check.Note()
	if check.Pinned {
		h.HostPinned = "yes"
	}
	if len(revs) == 2 {
		h.BaselineCommit, h.ExperimentCommit = revs[0].commit, revs[1].commit
	}
	if a.header != nil {
		a.header(&h)
	}
	var fileSides []report.Side
	failed := false
	for i, r := range runs {
		hs := h
		if len(revs) == 2 {
			hs.Toolchain = revs[i].name
		}
		fileSides = append(fileSides, report.Side{Header: hs, Run: r})
		failed = failed || r.Failed()
	}
	var buf bytes.Buffer
	if err := report.WriteSides(&buf, fileSides); err != nil {
		return "", failed, failedError{err.Error()}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", failed, failedError{err.Error()}
	}
	if err := report.WriteFileAtomic(path, buf.Bytes()); err != nil {
		return "", failed, failedError{err.Error()}
	}
	if runErr != nil {
		return path, failed, failedError{fmt.Sprintf("run interrupted: %v (results so far are in %s)", runErr, path)}
	}
	return path, failed, nil
}
