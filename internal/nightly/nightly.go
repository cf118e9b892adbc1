package nightly

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/history"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/bisect"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/revision"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// Options are one night's.
type Options struct {
	// Results is the results directory (results/).
	Results string
	// Anchor is the revision run against ("" = the latest tag, "none" = a
	// plain run).
	Anchor string
	// Program is the benchmark program's main package, to build the
	// anchor ("" = the one the running binary was built from); Packages,
	// instead, are Go package patterns whose test binaries are recorded.
	Program  string
	Packages []string
	// Cases are the planned cases of Registry (the running binary's).
	Cases    []engine.Case
	Registry *harness.Registry
	// Engine runs the forks.
	Engine engine.Options
	// AllowUnpinned records on a host that is not pinned.
	AllowUnpinned bool
	// Bisect bisects each new regression into Results/bisect/<machine>/,
	// no new one starting after BisectBudget; StepBudget is each of its
	// steps' budget for adding rounds.
	Bisect                   bool
	BisectBudget, StepBudget time.Duration
	// Explain is whether a bisection explains its culprit by its
	// functions (bisect.Options.Explain; the zero value does).
	Explain ab.Explain
	// BuildCache keeps the programs built at commits by tree hash: the
	// anchor's, so a later night does not build it again, and those of
	// bisections and explanations ("" or "off": none; see
	// revision.BuildCache).
	BuildCache string
	// Report, when set, is shown each bisection's report.
	Report func(*bisect.Report)
	// Chart, when set, draws each series with its change points into
	// Results/charts/ (the README links them).
	Chart ChartFunc
	// Now names the recorded run (default time.Now).
	Now func() time.Time
	// Dir is the user's source tree.
	Dir  string
	Host session.HostOptions
}

// Result is what a night recorded and found.
type Result struct {
	// Path is the run recorded.
	Path string
	// Regressions are the machine's new regressions, as README lines.
	Regressions []string
	// Bisections are the server files of the bisections made (what
	// --server uploads of them).
	Bisections []string
	Machine    string
}

// night is one night's run.
type night struct {
	o       Options
	eo      engine.Options // o.Engine, its CPUs resolved
	env     *session.Env
	repo    *revision.Repo
	machine string
}

// Run records one night: it checks the host, runs the selection (against
// the anchor when there is one), records the run append-only, reads the
// machine's series, bisects new regressions when asked, regenerates
// Results/README.md and ends with nightly's error: a failed fork, or the
// new regressions. The Result comes back with every error raised after
// the run was recorded.
func Run(ctx context.Context, env *session.Env, o Options) (*Result, error) {
	if o.Engine.Forks == 0 {
		return nil, session.Input("nightly needs forks")
	}
	if len(o.Engine.Profiles) > 0 {
		return nil, session.Input("{Profiles} is not supported by nightly: profiles perturb the recorded numbers; use run {Profiles}")
	}
	if err := report.CheckWritable(o.Results); err != nil {
		return nil, session.Input("{Results} %s: %w", o.Results, err)
	}
	repo, err := ab.OpenRepo(o.Dir)
	if err != nil {
		return nil, session.UsageError{Err: fmt.Errorf("nightly records commits: %w", err)}
	}
	head, err := repo.Head()
	if err != nil {
		return nil, session.UsageError{Err: err}
	}
	if o.Anchor == "" {
		o.Anchor = "none"
		if tag, ok := repo.LatestTag(); ok {
			o.Anchor = tag
		}
	}
	exe, err := env.SelfExecutable()
	if err != nil {
		return nil, err
	}
	n := &night{o: o, eo: o.Engine, env: env, repo: repo}
	s, err := session.Prepare(ctx, env, o.Host, &n.eo)
	if err != nil {
		return nil, err
	}
	defer s.Release()
	if !s.Check.Pinned && !o.AllowUnpinned {
		return nil, session.Failed("nightly: refusing a host that is not pinned ({AllowUnpinned} to record anyway): %s", s.Check.Note())
	}
	set, cleanup, err := n.sides(ctx, s, head, exe)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	return n.record(ctx, s, set, head)
}

// sides are what the night runs: this binary, or the packages' test
// binaries, alone or against the anchor.
func (n *night) sides(ctx context.Context, s *session.Session, head, exe string) (*ab.Sides, func(), error) {
	o := n.o
	set := &ab.Sides{Sides: []engine.Side{{Launch: engine.Program{Executable: exe}}}, Cases: o.Cases}
	switch {
	case len(o.Packages) > 0 && o.Anchor == "none":
		// The packages' benchmarks in the working tree, which is HEAD.
		tp, cleanup, err := session.PlanPackages(ctx, n.env, session.SourceDir(o.Dir), n.eo, o.Packages)
		if err != nil {
			return nil, nil, err
		}
		return &ab.Sides{Sides: []engine.Side{{Launch: tp.Bins}}, Cases: tp.Cases, Notes: tp.Notes, Broken: tp.Broken}, cleanup, nil
	case o.Anchor != "none":
		ws, err := ab.NewWorkspace(s, n.repo, "nightly")
		if err != nil {
			return nil, nil, err
		}
		ws.Cache = revision.OpenCache(o.BuildCache)
		set, err := n.anchorSides(ctx, ws, head, exe)
		if err != nil {
			ws.Close()
			return nil, nil, err
		}
		return set, func() { ws.Close() }, nil
	}
	return set, func() {}, nil
}

// anchorSides builds the anchor as the baseline against HEAD, the working
// tree: this very binary for registered benchmarks (the overlay, when
// the anchor needs one, takes the declarations from there too), the
// packages' test binaries built from the working tree otherwise.
func (n *night) anchorSides(ctx context.Context, ws *revision.Workspace, head, exe string) (*ab.Sides, error) {
	o := n.o
	rs, err := n.repo.Anchor(o.Anchor, head)
	if err != nil {
		return nil, session.RevisionError(err)
	}
	var prog *revision.Program
	var self *revision.Built
	if len(o.Packages) > 0 {
		rs[1].Tree = true // the working tree, recorded as HEAD
	} else {
		if prog, err = ab.FindProgram(o.Dir, n.repo, o.Program); err != nil {
			return nil, err
		}
		self = &revision.Built{Rev: revision.Revision{Name: "experiment", Rev: "HEAD", Commit: rs[1].Commit, Tree: true}, Bin: exe}
		if o.Registry != nil {
			for _, b := range o.Registry.Benchmarks() {
				self.Benches = append(self.Benches, revision.Describe(b))
			}
		}
	}
	set, err := ab.BuildPair(ctx, n.env, ws, o.Dir, rs, prog, self, o.Cases, n.eo, o.Packages)
	if err != nil {
		return nil, err
	}
	if len(set.Cases) == 0 {
		return nil, session.FailedError{Msg: "no selected benchmark is in both the anchor and HEAD"}
	}
	return set, nil
}

// record runs set, records the run append-only in the machine's history,
// regenerates the results README and ends with nightly's error.
func (n *night) record(ctx context.Context, s *session.Session, set *ab.Sides, head string) (*Result, error) {
	o := n.o
	n.machine = s.Check.MachineID
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	path := history.NightlyPath(o.Results, n.machine, now(), head)
	if _, err := os.Stat(path); err == nil {
		return nil, session.FailedError{Msg: path + " exists: nightly results are append-only"}
	}
	// Fork logs stay out of the append-only results tree.
	logs, err := os.MkdirTemp("", "benchctl-nightly-logs-")
	if err != nil {
		return nil, session.FailedError{Msg: err.Error()}
	}
	r, err := s.Record(ctx, &session.Recording{Options: n.eo, Cases: set.Cases, Sides: set.Sides, Revs: set.Revs, Notes: set.Notes,
		Dir: n.repo.Root, LogDir: logs, Out: session.ResultsFile{Path: path, Put: recordNew}})
	n.env.KeepLogs(logs, r, err)
	if err != nil {
		return nil, err
	}
	if r.Interrupted != nil {
		return nil, r.Interrupted
	}
	res := &Result{Path: r.Path, Machine: n.machine}
	if err := history.WriteMachine(o.Results, n.machine, s.Check.Facts); err != nil {
		return res, session.FailedError{Msg: err.Error()}
	}
	regs, news, err := n.writeHistory()
	if err != nil {
		return res, err
	}
	if len(news) > 0 && (o.Bisect || o.Explain != ab.ExplainOff) {
		if o.Bisect {
			res.Bisections = n.bisectNew(ctx, s, news)
		} else {
			n.explainNew(ctx, s, news)
		}
		if regs, _, err = n.writeHistory(); err != nil {
			return res, err
		}
	}
	res.Regressions = regs
	for _, reg := range regs {
		n.env.Say("NEW REGRESSION %s", reg)
	}
	if err := r.Outcome(set.Broken, r.Path); err != nil {
		return res, err
	}
	if len(regs) > 0 {
		return res, session.FailedError{Msg: fmt.Sprintf("%d new regression(s) on machine %s; see %s", len(regs), n.machine, filepath.Join(o.Results, "README.md"))}
	}
	return res, nil
}

// writeHistory reads every machine's series, charts them, regenerates
// Results/README.md, and returns the new regressions of this machine.
func (n *night) writeHistory() ([]string, []history.Regression, error) {
	dir := n.o.Results
	reports, err := machineReports(dir)
	if err != nil {
		return nil, nil, session.FailedError{Msg: err.Error()}
	}
	for _, m := range reports {
		m.BisectCommand = func(r history.Regression) string { return BisectCommand(n.env.Name, r, n.o.Packages) }
		m.Bisected = func(r history.Regression) string { return BisectedLine(dir, m.MachineID, r) }
		m.Explained = func(r history.Regression) string { return ExplainedLine(dir, m.MachineID, r) }
		if n.o.Chart != nil {
			if err := writeCharts(n.o.Chart, dir, m); err != nil {
				return nil, nil, session.FailedError{Msg: err.Error()}
			}
		}
	}
	var buf bytes.Buffer
	if err := history.WriteREADME(&buf, dir, reports); err != nil {
		return nil, nil, session.FailedError{Msg: err.Error()}
	}
	if err := report.WriteFileAtomic(filepath.Join(dir, "README.md"), buf.Bytes()); err != nil {
		return nil, nil, session.FailedError{Msg: err.Error()}
	}
	var regs []string
	var news []history.Regression
	for _, m := range reports {
		if m.MachineID == n.machine {
			news = m.NewRegressions()
			regs = m.Lines(news)
			for _, w := range m.Warnings {
				n.env.Say("history: %s", w)
			}
		}
	}
	return regs, news, nil
}

// BisectCommand is the command (of the program name) that bisects a
// nightly regression: its commit range, its benchmark alone, the
// packages nightly measured.
func BisectCommand(name string, r history.Regression, patterns []string) string {
	return history.BisectCommand(name, r.Good, r.Bad, r.Series.Benchmark, r.Series.Unit, patterns)
}
