package benchctl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ledgerbench/ledgerbench/harness/history"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/atomicfile"
	"github.com/ledgerbench/ledgerbench/internal/chart"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/revision"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

func (a *app) nightlyCmd() *cobra.Command {
	var f runFlags
	var nf nightlyFlags
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
			if err := report.CheckWritable(nf.results); err != nil {
				return usageError(fmt.Errorf("--results %s: %w", nf.results, err))
			}
			return a.doNightly(cmd, o, cases, &f, &nf, args)
		},
	}
	a.addRunFlags(c, &f, engine.DefaultOptions())
	_ = c.Flags().MarkHidden("prof") // refused by nightly: profile with run --prof
	a.addServerFlags(c)
	c.Flags().StringVar(&nf.results, "results", "results", "the results directory")
	c.Flags().StringVar(&nf.anchor, "anchor", "", "anchor revision to run against (default: the latest tag; none: a plain run)")
	c.Flags().StringVar(&nf.cmd, "cmd", "", "the benchmark program's main package, to build the anchor (default: the one this binary was built from)")
	c.Flags().BoolVar(&nf.allowUnpinned, "allow-unpinned", false, "run on a host that is not pinned (the results say host-pinned: no)")
	c.Flags().BoolVar(&nf.bisect, "bisect", false, "bisect each new regression (as bisect does, into DIR/bisect/<machine-id>/), and show its culprit beside it")
	c.Flags().DurationVar(&nf.bisectBudget, "bisect-budget", time.Hour, "with --bisect, the machine time after which no further bisection starts")
	return c
}

// nightlyFlags are the flags of nightly beyond the run flags.
type nightlyFlags struct {
	results, anchor, cmd string
	allowUnpinned        bool
	bisect               bool
	bisectBudget         time.Duration
}

func (a *app) doNightly(cmd *cobra.Command, o engine.Options, cases []engine.Case, f *runFlags, nf *nightlyFlags, patterns []string) error {
	repo, err := ab.OpenRepo(a.dir)
	if err != nil {
		return usageError(fmt.Errorf("nightly records commits: %w", err))
	}
	head, err := repo.Head()
	if err != nil {
		return usageError(err)
	}
	anchor := nf.anchor
	if anchor == "" {
		anchor = "none"
		if tag, ok := repo.LatestTag(); ok {
			anchor = tag
		}
	}
	exe, err := a.env().SelfExecutable()
	if err != nil {
		return err
	}
	s, err := a.prepare(cmd.Context(), &o, f)
	if err != nil {
		return err
	}
	defer s.Release()
	if !s.Check.Pinned && !nf.allowUnpinned {
		return failedError("nightly: refusing a host that is not pinned (--allow-unpinned to record anyway): " + s.Check.Note())
	}
	set := &ab.Sides{Sides: []engine.Side{{Launch: engine.Program{Executable: exe}}}, Cases: cases}
	switch {
	case len(patterns) > 0 && anchor == "none":
		// The packages' benchmarks in the working tree, which is HEAD.
		tp, cleanup, err := a.planPackages(cmd.Context(), a.srcDir(), o, patterns)
		if err != nil {
			return err
		}
		defer cleanup()
		set = &ab.Sides{Sides: []engine.Side{{Launch: tp.Bins}}, Cases: tp.Cases, Notes: tp.Notes, Broken: tp.Broken}
	case anchor != "none":
		ws, err := ab.NewWorkspace(s, repo, "nightly")
		if err != nil {
			return err
		}
		defer ws.Close()
		if set, err = a.anchorSides(cmd.Context(), repo, ws, anchor, head, exe, nf.cmd, cases, o, patterns); err != nil {
			return err
		}
	}
	var nb *nightlyBisect
	if nf.bisect {
		nb = &nightlyBisect{a: a, repo: repo, o: o, cases: cases, f: f, nf: nf, patterns: patterns}
	}
	return a.recordNightly(cmd.Context(), s, o, set, nf.results, repo.Root, head, patterns, nb)
}

// anchorSides builds the anchor as the baseline against HEAD, the working
// tree: this very binary for registered benchmarks (the overlay, when
// the anchor needs one, takes the declarations from there too), the
// packages' test binaries built from the working tree otherwise.
func (a *app) anchorSides(ctx context.Context, repo *revision.Repo, ws *revision.Workspace, anchor, head, exe, cmdFlag string,
	cases []engine.Case, o engine.Options, patterns []string) (*ab.Sides, error) {
	rs, err := repo.Anchor(anchor, head)
	if err != nil {
		return nil, revisionError(err)
	}
	var prog *revision.Program
	var self *revision.Built
	if len(patterns) > 0 {
		rs[1].Tree = true // the working tree, recorded as HEAD
	} else {
		if prog, err = ab.FindProgram(a.dir, repo, cmdFlag); err != nil {
			return nil, err
		}
		self = &revision.Built{Rev: revision.Revision{Name: "experiment", Rev: "HEAD", Commit: rs[1].Commit, Tree: true}, Bin: exe}
		for _, b := range a.registry.Benchmarks() {
			self.Benches = append(self.Benches, revision.Describe(b))
		}
	}
	set, err := ab.BuildPair(ctx, a.env(), ws, a.dir, rs, prog, self, cases, o, patterns)
	if err != nil {
		return nil, err
	}
	if len(set.Cases) == 0 {
		return nil, failedError("no selected benchmark is in both the anchor and HEAD")
	}
	return set, nil
}

// recordNightly runs set, records the run append-only in the machine's
// history, regenerates the results README and ends with nightly's exit
// status.
func (a *app) recordNightly(ctx context.Context, s *session.Session, o engine.Options, set *ab.Sides, resultsDir, root, head string, patterns []string, nb *nightlyBisect) error {
	check := s.Check
	path := history.NightlyPath(resultsDir, check.MachineID, a.clock(), head)
	if _, err := os.Stat(path); err == nil {
		return failedError(path + " exists: nightly results are append-only")
	}
	// Fork logs stay out of the append-only results tree.
	logs, err := os.MkdirTemp("", "benchctl-nightly-logs-")
	if err != nil {
		return failedError(err.Error())
	}
	r, err := s.Measure(ctx, &session.Measurement{Options: o, Cases: set.Cases, Sides: set.Sides, Revs: set.Revs, Notes: set.Notes,
		Dir: root, LogDir: logs, Out: session.ResultsFile{Path: path, Put: recordNew}})
	a.env().KeepLogs(logs, r, err)
	if err != nil {
		return err
	}
	if r.Interrupted != nil {
		return r.Interrupted
	}
	fmt.Fprintf(a.stdout, "recorded %s\n", r.Path)
	if err := history.WriteMachine(resultsDir, check.MachineID, check.Facts); err != nil {
		return failedError(err.Error())
	}
	regs, news, err := a.writeHistory(resultsDir, check.MachineID, patterns)
	if err != nil {
		return err
	}
	if nb != nil && len(news) > 0 {
		nb.bisectNew(ctx, s, news, resultsDir, check.MachineID)
		if regs, _, err = a.writeHistory(resultsDir, check.MachineID, patterns); err != nil {
			return err
		}
	}
	for _, reg := range regs {
		a.say("NEW REGRESSION %s", reg)
	}
	if err := r.Outcome(set.Broken, r.Path); err != nil {
		return err
	}
	if len(regs) > 0 {
		return failedError(fmt.Sprintf("%d new regression(s) on machine %s; see %s", len(regs), check.MachineID, filepath.Join(resultsDir, "README.md")))
	}
	return nil
}

// writeHistory reads every machine's series, charts them, regenerates
// DIR/README.md, and returns the new regressions of machine.
func (a *app) writeHistory(resultsDir, machine string, patterns []string) ([]string, []history.Regression, error) {
	reports, err := machineReports(resultsDir)
	if err != nil {
		return nil, nil, failedError(err.Error())
	}
	for _, m := range reports {
		m.BisectCommand = func(r history.Regression) string { return a.bisectCommand(r, patterns) }
		m.Bisected = func(r history.Regression) string { return bisectedLine(resultsDir, m.MachineID, r) }
		if err := writeCharts(resultsDir, m); err != nil {
			return nil, nil, failedError(err.Error())
		}
	}
	var buf bytes.Buffer
	if err := history.WriteREADME(&buf, resultsDir, reports); err != nil {
		return nil, nil, failedError(err.Error())
	}
	if err := report.WriteFileAtomic(filepath.Join(resultsDir, "README.md"), buf.Bytes()); err != nil {
		return nil, nil, failedError(err.Error())
	}
	var regs []string
	var news []history.Regression
	for _, m := range reports {
		if m.MachineID == machine {
			news = m.NewRegressions()
			regs = m.Lines(news)
			for _, w := range m.Warnings {
				a.say("history: %s", w)
			}
		}
	}
	return regs, news, nil
}

// bisectCommand is the command that bisects a nightly regression: its
// commit range, its benchmark alone, the packages nightly measured.
func (a *app) bisectCommand(r history.Regression, patterns []string) string {
	return history.BisectCommand(a.name, r.Good, r.Bad, r.Series.Benchmark, r.Series.Unit, patterns)
}

// writeCharts draws each series of m with its change points.
func writeCharts(resultsDir string, m *history.MachineReport) error {
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
			return err
		}
		m.Charts[s] = p
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
		series, used, warnings := history.LoadMachine(runs, e.Name())
		m := &history.MachineReport{MachineID: e.Name(), Runs: used, Series: series, Shifts: map[*history.Series][]history.Shift{}, Warnings: warnings}
		for _, s := range series {
			m.Shifts[s] = history.Analyze(s, history.CPDOptions{Seed: 1})
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MachineID < out[j].MachineID })
	return out, nil
}
