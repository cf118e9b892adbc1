package benchctl

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness/history"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/internal/atomicfile"
	"github.com/ledgerbench/ledgerbench/internal/chart"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

func (a *app) nightlyCmd() *cobra.Command {
	var f runFlags
	var resultsDir, anchor, cmdFlag string
	var allowUnpinned bool
	c := &cobra.Command{
		Use:   "nightly [run flags] [--results DIR] [--anchor REV|none] [PACKAGES...]",
		Short: "Record a run per machine, find change points in each benchmark's series, regenerate results/README.md",
		Long: `nightly checks the host (refusing one that is not pinned unless --allow-unpinned), runs the
selected benchmarks with this binary as HEAD — against an anchor revision when there is one (the
latest tag by default; --anchor none for a plain run), built as ab builds its baseline — and
records the run, append-only, as DIR/nightly/<machine-id>/YYYY/MM/<stamp>_<commit>.txt, with the
machine's fingerprint in DIR/machines/<machine-id>.json. It then reads every run of the machine
(never mixing machines), finds change points in each benchmark's series (E-divisive means with a
permutation test), regenerates DIR/README.md and exits 1 when a new regression appears among the
last runs. A change of env-id at a change point is annotated, not alarmed. With package
arguments it records those packages' go test benchmarks instead (see run), built from the working
tree, and from the anchor as ab builds its baseline.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o, cases, err := a.planOrPackages(cmd, &f, args)
			if err != nil {
				return err
			}
			if err := forksWithoutProfiles(o, "nightly needs forks",
				"--prof is not supported by nightly: profiles perturb the recorded numbers; use run --prof"); err != nil {
				return err
			}
			if err := report.CheckWritable(resultsDir); err != nil {
				return usageError{fmt.Errorf("--results %s: %w", resultsDir, err)}
			}
			return a.doNightly(cmd, o, cases, &f, resultsDir, anchor, cmdFlag, allowUnpinned, args)
		},
	}
	a.addRunFlags(c, &f)
	a.addServerFlags(c)
	c.Flags().StringVar(&resultsDir, "results", "results", "the results directory")
	c.Flags().StringVar(&anchor, "anchor", "", "anchor revision to run against (default: the latest tag; none: a plain run)")
	c.Flags().StringVar(&cmdFlag, "cmd", "", "the benchmark program's main package, to build the anchor (default: the one this binary was built from)")
	c.Flags().BoolVar(&allowUnpinned, "allow-unpinned", false, "run on a host that is not pinned (the results say host-pinned: no)")
	return c
}

func (a *app) doNightly(cmd *cobra.Command, o engine.Options, cases []engine.Case, f *runFlags, resultsDir, anchor, cmdFlag string, allowUnpinned bool, patterns []string) error {
	root, err := a.repoRoot()
	if err != nil {
		return usageError{fmt.Errorf("nightly records commits: %w", err)}
	}
	head, err := git(root, "rev-parse", "HEAD")
	if err != nil {
		return usageError{err}
	}
	if anchor == "" {
		if tag, err := git(root, "describe", "--tags", "--abbrev=0"); err == nil {
			anchor = tag
		} else {
			anchor = "none"
		}
	}
	exe, err := a.selfExecutable()
	if err != nil {
		return err
	}
	s, err := a.prepare(&o, f)
	if err != nil {
		return err
	}
	defer s.release()
	check := s.check
	if !check.Pinned && !allowUnpinned {
		return failedError{"nightly: refusing a host that is not pinned (--allow-unpinned to record anyway): " + check.Note()}
	}
	sides := []engine.Side{{Executable: exe}}
	var revs []revision
	var notes, broken []string
	switch {
	case len(patterns) > 0 && anchor == "none":
		// The packages' benchmarks in the working tree, which is HEAD.
		tp, err := a.planPackages(cmd.Context(), a.srcDir(), o, patterns)
		if err != nil {
			return err
		}
		defer os.RemoveAll(tp.work)
		sides, cases, notes, broken = []engine.Side{{Tests: tp.bins}}, tp.cases, tp.notes, tp.broken
	case anchor != "none":
		rs, err := a.anchorRevisions(root, anchor, head)
		if err != nil {
			return usageError{err}
		}
		var prog *program
		if len(patterns) == 0 {
			if prog, err = findProgram(a.srcDir(), root, cmdFlag); err != nil {
				return usageError{err}
			}
		}
		if !f.ignoreLock {
			removeStaleWorktrees(root)
		}
		work, err := os.MkdirTemp("", "benchctl-nightly-")
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
		revs = rs[:]
		if len(patterns) > 0 {
			rs[1].tree = true // the working tree, recorded as HEAD
			tp, err := a.buildTestPair(cmd.Context(), root, work, rs, o, patterns, &cleanups)
			if err != nil {
				return err
			}
			sides, cases, notes, broken = tp.sides, tp.cases, tp.notes, tp.broken
		} else {
			// This very binary, built from the working tree: the overlay,
			// when the anchor needs one, takes the declarations from there
			// too.
			self := &built{rev: revision{name: "experiment", rev: "HEAD", commit: rs[1].commit, tree: true}, bin: exe}
			for _, b := range a.registry.Benchmarks() {
				self.benches = append(self.benches, describe(b))
			}
			base, _, n, err := a.buildBase(root, work, prog, rs[0], self, cases, &cleanups)
			if err != nil {
				return err
			}
			notes = n
			cases = runnable(cases, base, self)
			sides = []engine.Side{{Name: "baseline", Executable: base.bin}, {Name: "experiment", Executable: exe}}
		}
		for _, n := range notes {
			a.say("%s", n)
		}
		if len(cases) == 0 {
			return failedError{"no selected benchmark is in both the anchor and HEAD"}
		}
	}
	path := history.NightlyPath(resultsDir, check.MachineID, a.clock(), head)
	if _, err := os.Stat(path); err == nil {
		return failedError{path + " exists: nightly results are append-only"}
	}
	// Fork logs stay out of the append-only results tree.
	logs, err := os.MkdirTemp("", "benchctl-nightly-logs-")
	if err != nil {
		return failedError{err.Error()}
	}
	path, failed, err := a.runSides(cmd, o, cases, s, root, revs, sides, path, logs, notes, recordNew, nil)
	a.say("fork logs in %s", logs)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "recorded %s\n", path)
	if err := history.WriteMachine(resultsDir, check.MachineID, check.Facts); err != nil {
		return failedError{err.Error()}
	}
	reports, err := machineReports(resultsDir)
	if err != nil {
		return failedError{err.Error()}
	}
	for _, m := range reports {
		m.Charts = map[*history.Series]string{}
		for _, s := range m.Series {
			p := filepath.Join(resultsDir, "charts", m.MachineID, history.ChartName(s))
			values := make([]float64, len(s.Points))
			for i, pt := range s.Points {
				values[i] = pt.Value
			}
			var cps []int
			for _, sh := range m.Shifts[s] {
				cps = append(cps, sh.Index)
			}
			if err := chart.WriteSeriesChart(p, s.Benchmark+" on "+m.MachineID, s.Unit, values, cps); err != nil {
				return failedError{err.Error()}
			}
			m.Charts[s] = p
		}
	}
	var buf bytes.Buffer
	if err := history.WriteREADME(&buf, resultsDir, reports); err != nil {
		return failedError{err.Error()}
	}
	if err := report.WriteFileAtomic(filepath.Join(resultsDir, "README.md"), buf.Bytes()); err != nil {
		return failedError{err.Error()}
	}
	var regs []string
	for _, m := range reports {
		if m.MachineID == check.MachineID {
			regs = m.Regressions()
			for _, w := range m.Warnings {
				a.say("history: %s", w)
			}
		}
	}
	for _, r := range regs {
		a.say("NEW REGRESSION %s", r)
	}
	switch {
	case failed:
		return failedError{"a fork failed; the results obtained are in " + path}
	case len(broken) > 0:
		return failedError{fmt.Sprintf("%d package(s) did not build (%s); the results obtained are in %s", len(broken), strings.Join(broken, ", "), path)}
	case len(regs) > 0:
		return failedError{fmt.Sprintf("%d new regression(s) on machine %s; see %s", len(regs), check.MachineID, filepath.Join(resultsDir, "README.md"))}
	}
	return nil
}

// recordNew records a nightly run at path, or beside it as path-2.txt,
// path-3.txt… when another run took that name meanwhile: it creates the
// file exclusively and never replaces a recorded run.
func recordNew(path string, data []byte) (string, error) {
	base := strings.TrimSuffix(path, ".txt")
	for i := 1; i <= 100; i++ {
		p := path
		if i > 1 {
			p = fmt.Sprintf("%s-%d.txt", base, i)
		}
		err := atomicfile.CreateNew(p, data)
		if !errors.Is(err, fs.ErrExist) {
			return p, err
		}
	}
	return "", fmt.Errorf("%s and 99 more names beside it exist: nightly results are append-only", path)
}

// anchorRevisions resolves the anchor and HEAD as baseline and experiment.
func (a *app) anchorRevisions(root, anchor, head string) ([2]revision, error) {
	var rs [2]revision
	c, err := git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", anchor+"^{commit}")
	if err != nil || c == "" {
		return rs, fmt.Errorf("anchor %q does not exist in %s", anchor, root)
	}
	rs[0] = revision{name: "baseline", rev: anchor, commit: c}
	rs[1] = revision{name: "experiment", rev: "HEAD", commit: head}
	return rs, nil
}

// machineReports reads every machine's nightly series and their shifts.
func machineReports(dir string) ([]*history.MachineReport, error) {
	entries, err := os.ReadDir(filepath.Join(dir, "nightly"))
	if err != nil {
		return nil, err
	}
	var out []*history.MachineReport
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		runs, err := history.Runs(dir, e.Name())
		if err != nil {
			return nil, err
		}
		series, used, warnings := history.Load(runs)
		m := &history.MachineReport{MachineID: e.Name(), Runs: used, Series: series, Shifts: map[*history.Series][]history.Shift{}, Warnings: warnings}
		for _, s := range series {
			m.Shifts[s] = history.Analyze(s, history.CPDOptions{Seed: 1})
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MachineID < out[j].MachineID })
	return out, nil
}
