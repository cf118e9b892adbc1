package bisect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/revision"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// bisector is one bisection: its range, its host and what it follows.
type bisector struct {
	env   *session.Env
	s     *session.Session
	opts  Options
	o     engine.Options // opts.Engine, its CPUs resolved by the session
	repo  *revision.Repo
	prog  *revision.Program
	start time.Time

	good, bad revision.Commit
	commits   []revision.Commit // good (excluded) to bad, oldest first
	track     *tracked          // the row followed, from the confirmation
	rep       Report
	steps     int // A/B runs made, the confirmation included
	probes    int // commits probed
	// suspects is how many commits may hold the change as the search
	// stands (see Narrowing), and searching when it began.
	suspects  int
	searching time.Time
	// mu guards the counts and the builds of probes made at once
	// (Options.Parallel): worktrees and the build cache are one at a
	// time, the measurements on the fleet at once.
	mu sync.Mutex
}

// tracked is the row a bisection follows and the whole change of it.
type tracked struct {
	config, row, unit string
	total             *compare.Decision // bad against good
	others            []string          // other rows changed the same way
}

// logTotal is the log of the whole change's ratio.
func (t *tracked) logTotal() float64 { return math.Log(t.total.Change.Ratio) }

// resolve resolves the good and bad ends and lists the range.
func (bs *bisector) resolve() error {
	var ends [2]string
	for i, rev := range []string{bs.opts.Good, bs.opts.Bad} {
		c, err := bs.repo.Resolve(rev)
		if err != nil {
			return session.RevisionError(err)
		}
		ends[i] = c
	}
	var err error
	if bs.good, err = bs.repo.Describe(ends[0]); err != nil {
		return failedError(err.Error())
	}
	if bs.bad, err = bs.repo.Describe(ends[1]); err != nil {
		return failedError(err.Error())
	}
	if bs.commits, err = bs.repo.FirstParents(ends[0], ends[1]); err != nil {
		return session.RevisionError(err)
	}
	return nil
}

// run confirms the ends, searches the range, measures the culprit
// against its parent and writes the report.
func (bs *bisector) run(ctx context.Context) error {
	bs.rep = Report{Command: bs.env.Command, Good: bs.good, Bad: bs.bad, Commits: len(bs.commits),
		Log2: ceilLog(len(bs.commits), 2), Direction: bs.opts.Direction}
	cache := "none"
	if c := bs.opts.Cache(); c != nil {
		cache = c.Dir
	}
	bs.env.Say("bisecting %d commits from good %s to bad %s → %s (build cache: %s)", len(bs.commits), revision.Short(bs.good.Hash), revision.Short(bs.bad.Hash), bs.opts.Out, cache)
	if err := bs.confirm(ctx); err != nil {
		return bs.finish(err)
	}
	bs.searching = time.Now()
	k := max(bs.opts.Parallel, 1)
	res, err := SearchParallel(ctx, bs.commits, bs, k)
	if res != nil {
		bs.rep.Steps, bs.rep.Culprit, bs.rep.Suspects, bs.rep.Stopped = res.Steps, res.Culprit, res.Suspects, res.Stopped
		if k > 1 {
			bs.rep.Parallel = k
			for _, s := range res.Steps {
				bs.rep.Batches = max(bs.rep.Batches, s.Batch)
			}
		}
	}
	if err != nil {
		return bs.finish(err)
	}
	if res.Culprit == nil {
		return bs.finish(bisectError("no culprit decided: the change is in one of %d commits (%s); see %s", len(res.Suspects), shortList(res.Suspects), filepath.Join(bs.opts.Out, "bisect.md")))
	}
	return bs.finish(bs.own(ctx, *res.Culprit))
}

// finish writes the report and returns err, or the report's failure.
func (bs *bisector) finish(err error) error {
	bs.rep.Took = time.Since(bs.start)
	bs.rep.ABRuns = bs.steps
	if err != nil {
		bs.rep.Error = err.Error()
	}
	if werr := bs.writeReport(); werr != nil {
		if err != nil {
			return fmt.Errorf("%w (and the report could not be written: %v)", err, werr)
		}
		return failedError("writing the report: " + werr.Error())
	}
	return err
}

// stepRun is one A/B of a bisection: the sides built, the file written
// and the comparison.
type stepRun struct {
	ts      *compare.Tables
	m       *session.Recorded
	set     *ab.Sides
	dir     string
	rounds  int
	took    time.Duration
	unbuilt error // the baseline did not build or declare the case
	// explained are the step's rows explained by their functions (the
	// culprit's own step).
	explained []ab.Explained
}

// ab builds base and head in a workspace of their own (removed after
// the step, the builds kept in the cache) and runs their A/B into
// DIR/steps/NAME, adding rounds until the change's interval is within
// what add asks (or the budget is spent).
func (bs *bisector) ab(ctx context.Context, name string, base, head revision.Commit, add adding) (*stepRun, error) {
	start := time.Now()
	sr := &stepRun{dir: filepath.Join(bs.opts.Out, StepsDir, name)}
	bs.mu.Lock()
	bs.steps++
	bs.mu.Unlock()
	b, done, err := bs.build(ctx, base, head)
	if err != nil {
		return nil, err
	}
	defer done()
	if b.unbuilt != nil {
		sr.unbuilt, sr.took = b.unbuilt, time.Since(start)
		return sr, nil
	}
	set := b.Sides
	sr.set = set
	if bs.track != nil {
		set.Cases = trackedCases(set.Cases, bs.track.row)
	}
	if len(set.Cases) == 0 {
		sr.unbuilt, sr.took = unbuiltReason(set, base), time.Since(start)
		return sr, nil
	}
	if bs.opts.Remote != nil {
		return bs.remoteStep(ctx, sr, set, add, start)
	}
	o := bs.stepOptions(add)
	// Decided as ab decides: anytime-valid where rounds stop on a look.
	co := ab.Verdicts(bs.opts.Alpha, bs.opts.MinChange, o.UntilDecided)
	path := filepath.Join(sr.dir, "ab.txt")
	rec := &session.Recording{Options: o, Cases: set.Cases, Sides: set.Sides, Revs: set.Revs, Notes: set.Notes, Dir: bs.repo.Root,
		LogDir: filepath.Join(sr.dir, "logs"), ProfileDir: filepath.Join(sr.dir, "profiles"), Out: session.ResultsFile{Path: path, Put: session.ReplaceFile}}
	if o.UntilDecided {
		rec.Decide = ab.Decide(path, co)
	}
	r, err := bs.s.Record(ctx, rec)
	if err != nil {
		return nil, err
	}
	if r.Interrupted != nil {
		return nil, r.Interrupted
	}
	if r.Failed > 0 {
		return nil, bisectError("%d fork(s) of the A/B of %s against %s failed; its results are in %s", r.Failed, revision.Short(base.Hash), revision.Short(head.Hash), r.Path)
	}
	ts, err := compare.BuildData(r.Path, r.Data, co)
	if err != nil {
		return nil, failedError(err.Error())
	}
	sr.ts, sr.m, sr.took = ts, r, time.Since(start)
	if len(r.Runs) > 0 && len(r.Runs[0].Cases) > 0 {
		sr.rounds = len(r.Runs[0].Cases[0].ForkScores())
	}
	return sr, bs.explainStep(ctx, sr, add)
}

// explainStep explains the step's changed rows by their functions when
// add asks it, while the step's builds are at hand (the workspace goes
// with the step): profiling forks on this machine.
func (bs *bisector) explainStep(ctx context.Context, sr *stepRun, add adding) error {
	if add.explain && bs.opts.Explain != ab.ExplainOff {
		x := ab.Explaining{Mode: bs.opts.Explain, Rounds: bs.opts.ExplainRounds, Alpha: bs.opts.Alpha, Engine: bs.o, Dir: filepath.Join(sr.dir, ab.ExplainDir)}
		if sr.m != nil {
			x.Runs = sr.m.Runs // a go test row's profiling forks are sized by its speed
		}
		sr.explained = ab.ExplainRows(ctx, bs.s, sr.set, bs.repo.Root, sr.ts, x)
	}
	return nil
}

// Batch builds the commits a search step is about to probe at once into
// the build cache, one after another, before any is measured: the
// probes then start from the cache, and no build runs beside a probe's
// measurement (on a host the coordinator shares with agents, a build
// would be the measurement's noise). Without a cache, or one commit at
// a time, it does nothing.
func (bs *bisector) Batch(ctx context.Context, commits []revision.Commit) {
	if bs.opts.Remote == nil || bs.opts.Cache() == nil || len(commits) < 2 {
		return
	}
	for _, c := range commits {
		if _, done, err := bs.build(ctx, c, bs.bad); err == nil {
			done()
		}
	}
}

// built is a step's sides, or why they could not be built.
type built struct {
	*ab.Sides
	unbuilt error
}

// build builds base and head in a workspace of its own, one step at a
// time (worktrees and the build cache are shared by the probes of a
// batch); done removes the workspace. A revision that does not build is
// built.unbuilt; an interrupt is the error.
func (bs *bisector) build(ctx context.Context, base, head revision.Commit) (built, func(), error) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	ws, err := ab.NewWorkspace(bs.s, bs.repo, "bisect")
	if err != nil {
		return built{}, nil, err
	}
	done := func() {
		bs.mu.Lock()
		ws.Close()
		bs.mu.Unlock()
	}
	ws.Cache = bs.opts.Cache()
	revs := [2]revision.Revision{{Name: "baseline", Rev: revision.Short(base.Hash), Commit: base.Hash}, {Name: "experiment", Rev: revision.Short(head.Hash), Commit: head.Hash}}
	set, err := ab.BuildPair(ctx, bs.env, ws, bs.opts.Dir, revs, bs.prog, nil, bs.opts.Cases, bs.o, bs.opts.Packages)
	switch {
	case err != nil && ctx.Err() != nil:
		ws.Close()
		return built{}, nil, bisectError("interrupted while building %s", revision.Short(base.Hash))
	case err != nil:
		return built{unbuilt: err}, done, nil
	}
	return built{Sides: set}, done, nil
}

// stepOptions are the engine's options of a step's A/B run for add.
func (bs *bisector) stepOptions(add adding) engine.Options {
	o := bs.o
	o.Precision, o.Budget = add.precision, bs.opts.Budget
	if !add.counts {
		o.Profiles = nil
	}
	if add.decided {
		o.UntilDecided, o.Forks = true, max(o.Forks, verdict.MinSamples)
	}
	return o
}

// adding is what an A/B is run for: rows decided (by the anytime-valid
// verdicts, looked at after every round), or an interval of the change
// within ±precision, by adding rounds; with explain, the functions
// behind its changed rows; with counts, their instructions counted (the
// culprit's own A/B, when the bisection takes {Profiles} instructions).
type adding struct {
	decided   bool
	precision float64
	explain   bool
	counts    bool
}

// unbuiltReason says why a step has no case to run.
func unbuiltReason(set *ab.Sides, base revision.Commit) error {
	if len(set.Broken) > 0 {
		return fmt.Errorf("does not build: %s", strings.Join(set.Broken, ", "))
	}
	return fmt.Errorf("%s runs none of the benchmark's cases, even with the bad end's declarations overlaid", revision.Short(base.Hash))
}

// trackedCases keeps the cases whose results are the row followed (a
// row is a result name without "Benchmark" and its GOMAXPROCS suffix).
func trackedCases(cases []engine.Case, row string) []engine.Case {
	var out []engine.Case
	for _, c := range cases {
		if RowName(c.Name()) == RowName(row) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return cases // a name the rows spell otherwise: run them all, follow the row
	}
	return out
}

// RowName is a result's row name: without "Benchmark" and its
// GOMAXPROCS suffix.
func RowName(name string) string {
	return result.TrimProcs(strings.TrimPrefix(name, "Benchmark"))
}

// confirm runs good against bad and picks the row to follow.
func (bs *bisector) confirm(ctx context.Context) error {
	bs.env.Say("confirming the ends: good %s against bad %s", revision.Short(bs.good.Hash), revision.Short(bs.bad.Hash))
	// Until the rows are decided, not until a change of --min-change could
	// be detected: a clear change (or a reversed one) is decided from
	// the first look, after the first three rounds.
	sr, err := bs.ab(ctx, "00-confirm", bs.good, bs.bad, adding{decided: true})
	if err != nil {
		return err
	}
	if sr.unbuilt != nil {
		if sr.set != nil && sr.set.HeadCases == 0 && len(sr.set.Broken) == 0 {
			return session.Input("the selection ({Bench} %q) matches no benchmark of the bad end %s", bs.o.Bench, revision.Short(bs.bad.Hash))
		}
		return bisectError("the A/B of the ends %s..%s: %v", revision.Short(bs.good.Hash), revision.Short(bs.bad.Hash), sr.unbuilt)
	}
	bs.rep.Confirm = confirmStep(sr, bs.opts.Out)
	if len(sr.set.Cases) == 0 {
		return usageError(errors.New("no selected benchmark is declared by the bad end"))
	}
	t, rev, err := pickTracked(sr.ts, bs.opts.Metric, bs.opts.Direction == "better")
	if err != nil {
		return err
	}
	switch {
	case t != nil:
		bs.rep.Confirm.Change, bs.rep.Confirm.Verdict = changeOf(t.total.Change), t.total.Verdict.String()
	case rev != nil:
		bs.rep.Confirm.Change, bs.rep.Confirm.Verdict = changeOf(rev.total.Change), rev.total.Verdict.String()
	default:
		bs.rep.Confirm.Verdict = "not changed"
	}
	if t == nil {
		if rev != nil {
			other := map[string]string{"worse": "better", "better": "worse"}[bs.opts.Direction]
			bs.rep.Reversed = true
			return bisectError("good and bad are reversed for %s %s: bad is %+.1f %% against good, which is %s; --direction %s bisects that change",
				rev.row, rev.unit, rev.total.Change.Pct(), other, other)
		}
		return bisectError("no change between these revisions: no %s row changed by at least --min-change %g %% (%s)", unitName(bs.opts.Metric), bs.opts.MinChange, sr.m.Path)
	}
	bs.track = t
	if err := bs.refine(ctx); err != nil {
		return err
	}
	bs.rep.Benchmark, bs.rep.Unit, bs.rep.Config = t.row, t.unit, t.config
	bs.rep.Total = changeOf(t.total.Change)
	bs.rep.Others = t.others
	bs.env.Say("following %s %s: %+.2f %% [%+.2f, %+.2f] from good to bad", t.row, t.unit, t.total.Change.Pct(), ratioPct(t.total.Change.Lo), ratioPct(t.total.Change.Hi))
	return nil
}

// refineShare is how narrow the whole change's interval must be, as a
// share of the change: every step's position carries its uncertainty.
const refineShare = 8

// refine measures the ends again, when the confirmation's interval of
// the whole change is wider than ±1/refineShare of the change, adding
// rounds until it is within that (or the budget is spent), and follows
// the new estimate when it still finds the change the same way.
func (bs *bisector) refine(ctx context.Context) error {
	t := bs.track
	c, total := t.total.Change, math.Abs(t.logTotal())
	if (math.Log(c.Hi)-math.Log(c.Lo))/2 <= total/refineShare {
		return nil
	}
	bs.env.Say("the whole change's interval [%+.2f, %+.2f] %% is wide for the steps: measuring the ends again until it is within ±%.0f %% of the change",
		ratioPct(c.Lo), ratioPct(c.Hi), 100.0/refineShare)
	sr, err := bs.ab(ctx, "00-confirm-again", bs.good, bs.bad, adding{precision: total / refineShare})
	if err != nil {
		return err
	}
	if sr.unbuilt != nil {
		return bisectError("the A/B of the ends %s..%s: %v", revision.Short(bs.good.Hash), revision.Short(bs.bad.Hash), sr.unbuilt)
	}
	bs.rep.Refined = confirmStep(sr, bs.opts.Out)
	d := bs.decision(sr.ts)
	if d != nil {
		bs.rep.Refined.Change, bs.rep.Refined.Verdict = changeOf(d.Change), d.Verdict.String()
	}
	if !confirms(d, t.total) {
		// The ends measured twice disagree: a search would place every
		// commit against a change that may not exist.
		bs.rep.Ambiguous = true
		again := "no such row"
		if d != nil {
			again = fmt.Sprintf("%s %+.2f %% [%+.2f, %+.2f]", d.Verdict, d.Change.Pct(), ratioPct(d.Change.Lo), ratioPct(d.Change.Hi))
		}
		return bisectError("ambiguous: the ends measured again do not confirm the change of %s %s (first %+.2f %% [%+.2f, %+.2f], again %s): nothing is searched; the ends differ by less than the noise of their builds and processes, or the change comes and goes (%s)",
			t.row, t.unit, c.Pct(), ratioPct(c.Lo), ratioPct(c.Hi), again, filepath.Join(bs.opts.Out, StepsDir))
	}
	t.total = d
	return nil
}

// confirms reports whether decision d, of another A/B, finds the change
// the ends found (total): changed, the same way. A bisection follows a
// change only while its ends' second measurement confirms it, and claims
// a culprit only when the commit's own A/B against its parent does.
func confirms(d, total *compare.Decision) bool {
	return d.Is(verdict.Changed) && d.Worse == total.Worse
}

func unitName(metric string) string {
	if metric == "" {
		return "time or throughput"
	}
	return metric
}

func ratioPct(ratio float64) float64 { return (ratio - 1) * 100 }

// pickTracked is the changed row of the unit (sec/op or ops/s when
// metric is empty) that changed most in the direction asked, and, when
// none did, the one that changed most the other way.
func pickTracked(ts *compare.Tables, metric string, better bool) (found, reversed *tracked, _ error) {
	seen := false
	for _, t := range ts.Tables {
		if metric == "" && t.Unit != "sec/op" && t.Unit != "ops/s" || metric != "" && t.Unit != metric {
			continue
		}
		seen = true
		for _, row := range t.Rows {
			for _, col := range t.Cols[1:] {
				d := t.Decision(row, col)
				if d == nil || d.Err != nil || d.Verdict != verdict.Changed {
					continue
				}
				c := &tracked{config: t.Config, row: row.StringValues(), unit: t.Unit, total: d}
				pick := &found
				if d.Worse == better {
					pick = &reversed
				}
				switch {
				case *pick == nil:
					*pick = c
				case math.Abs(c.logTotal()) > math.Abs((*pick).logTotal()):
					c.others = append((*pick).others, (*pick).row)
					*pick = c
				default:
					(*pick).others = append((*pick).others, c.row)
				}
			}
		}
	}
	if !seen && metric != "" {
		return nil, nil, session.Input("{Metric} %s: the A/B of the ends measured no such unit (%s)", metric, strings.Join(units(ts), ", "))
	}
	return found, reversed, nil
}

func units(ts *compare.Tables) []string {
	var us []string
	for _, t := range ts.Tables {
		if !slices.Contains(us, t.Unit) {
			us = append(us, t.Unit)
		}
	}
	return us
}

// decision is the step's decision of the row followed.
// The configuration must match when one does (go test benchmarks of
// several packages may share a name); it holds the A/B's commits, which
// differ from step to step, so otherwise the row and unit decide.
func (bs *bisector) decision(ts *compare.Tables) *compare.Decision {
	for _, sameConfig := range []bool{true, false} {
		for _, t := range ts.Tables {
			if t.Unit != bs.track.unit || sameConfig && t.Config != bs.track.config {
				continue
			}
			for _, row := range t.Rows {
				if row.StringValues() != bs.track.row {
					continue
				}
				for _, col := range t.Cols[1:] {
					if d := t.Decision(row, col); d != nil && d.Err == nil {
						return d
					}
				}
			}
		}
	}
	return nil
}

// Narrowed records how many commits may still hold the change, for the
// step's progress line.
func (bs *bisector) Narrowed(suspects int) { bs.suspects = suspects }

// progress is the step's progress: the commits that may hold the
// change, the steps left with this one (log2 of them), and from the
// second step the time those take at the pace of the steps so far.
func (bs *bisector) progress() string {
	left := max(1, ceilLog(bs.suspects, max(bs.opts.Parallel, 1)+1))
	s := fmt.Sprintf("%d commits may hold the change, about %d step(s) left with this one", bs.suspects, left)
	if done := bs.probes - 1; done > 0 {
		per := time.Since(bs.searching) / time.Duration(done)
		s += fmt.Sprintf(" (%s a step so far: about %s)", per.Round(time.Second), (per * time.Duration(left)).Round(time.Second))
	}
	return s
}

// Probe is one step of the search: commit c against the bad end. The change of bad
// against c is what c lacks of the whole change, so c carries
// 1 − log(bad/c) / log(bad/good) of it.
func (bs *bisector) Probe(ctx context.Context, i int, c revision.Commit) (Step, error) {
	bs.mu.Lock()
	bs.probes++
	bs.env.Say("step %d: commit %d of %d, %s %s; %s", bs.probes, i+1, len(bs.commits), revision.Short(c.Hash), c.Subject, bs.progress())
	name := fmt.Sprintf("%02d-%s", bs.steps, revision.Short(c.Hash))
	bs.mu.Unlock()
	// On a fleet only the culprit's own step explains: the profiling
	// forks run here, and probes run at once.
	sr, err := bs.ab(ctx, name, c, bs.bad, adding{precision: math.Abs(bs.track.logTotal()) / 4, explain: bs.opts.Remote == nil})
	if err != nil {
		return Step{}, err
	}
	st := Step{Commit: c, Index: i, Took: sr.took, Rounds: sr.rounds}
	if rel, err := filepath.Rel(bs.opts.Out, sr.dir); err == nil {
		st.Dir = rel
	}
	if sr.unbuilt != nil {
		st.Verdict, st.Reason, st.Dir = Skipped, sr.unbuilt.Error(), ""
		bs.env.Say("  skipped: %v", sr.unbuilt)
		return st, nil
	}
	d := bs.decision(sr.ts)
	if d == nil {
		st.Verdict, st.Reason = Skipped, "the A/B has no "+bs.track.row+" "+bs.track.unit+" row"
		return st, nil
	}
	p := share(d.Change, bs.track.total.Change)
	if p, err = bs.again(ctx, name, c, p, &st); err != nil {
		return Step{}, err
	}
	st.Position, st.Verdict = &p, Classify(p)
	if st.Verdict == Unknown {
		st.Reason = fmt.Sprintf("its interval [%.0f %%, %.0f %%] of the change holds one half after %d rounds", 100*p.Lo, 100*p.Hi, st.Rounds)
	}
	bs.env.Say("  %s: carries %.0f %% [%.0f, %.0f] of the change (%d rounds, %s)", st.Verdict, 100*p.Share, 100*p.Lo, 100*p.Hi, st.Rounds, st.Took.Round(time.Second))
	return st, nil
}

// again measures commit c a second time when its position p is unknown
// but away from the midpoint (a commit that carries part of the change,
// as between two changes), until its interval is narrow enough to tell
// which side it is on; it returns the position to decide by, and counts
// the second A/B's rounds and time in st.
func (bs *bisector) again(ctx context.Context, name string, c revision.Commit, p Position, st *Step) (Position, error) {
	prec, ok := againPrecision(p, bs.track.logTotal())
	if !ok {
		return p, nil
	}
	bs.env.Say("  unknown: carries %.0f %% [%.0f, %.0f] of the change; measuring it again to ±%.0f %%", 100*p.Share, 100*p.Lo, 100*p.Hi, 100*prec/math.Abs(bs.track.logTotal()))
	sr, err := bs.ab(ctx, name+"-again", c, bs.bad, adding{precision: prec})
	if err != nil {
		return p, err
	}
	st.Took += sr.took
	if sr.unbuilt != nil {
		return p, nil
	}
	d := bs.decision(sr.ts)
	if d == nil {
		return p, nil
	}
	st.Rounds += sr.rounds
	if rel, err := filepath.Rel(bs.opts.Out, sr.dir); err == nil {
		st.Dir = rel
	}
	return share(d.Change, bs.track.total.Change), nil
}

// againPrecision says whether a step whose position p is unknown is
// measured again, and to what precision of the log change: every unknown
// step is, to an interval of 0.7 of its estimate's distance d from the
// midpoint, which would place it on one side, but no finer than 0.7/8 of
// the change. Nearer than 1/8 that floor still places a commit that
// carries a third of the change and was measured near the half by chance
// (once, under load: 46 % [23, 70] for a commit at 36 %); a commit that
// carries half of it stays unknown, at a bounded cost.
func againPrecision(p Position, logTotal float64) (float64, bool) {
	if Classify(p) != Unknown {
		return 0, false
	}
	return 0.7 * max(math.Abs(p.Share-0.5), 1.0/8) * math.Abs(logTotal), true
}

// share is the position of a commit from the change c of bad against
// it, given the whole change (bad against good): 1 − log c / log total,
// with an interval that carries the uncertainty of both (their log
// half-widths combined in quadrature, as for a quotient).
func share(c, total verdict.Change) Position {
	q := quotient(c, total)
	return Position{Share: 1 - q.Share, Lo: 1 - q.Hi, Hi: 1 - q.Lo}
}

// quotient is log a / log b with its interval.
func quotient(a, b verdict.Change) Position {
	la, lb := math.Log(a.Ratio), math.Log(b.Ratio)
	ha, hb := (math.Log(a.Hi)-math.Log(a.Lo))/2, (math.Log(b.Hi)-math.Log(b.Lo))/2
	q := la / lb
	h := math.Hypot(ha/lb, q*hb/lb)
	return Position{Share: q, Lo: q - h, Hi: q + h}
}

// own measures the culprit against its parent: its pull-request table
// and the share of the whole change it explains.
func (bs *bisector) own(ctx context.Context, culprit revision.Commit) error {
	parent := bs.good
	if p := bs.repo.Parent(culprit.Hash); p != "" && p != bs.good.Hash {
		var err error
		if parent, err = bs.repo.Describe(p); err != nil {
			return failedError(err.Error())
		}
	}
	bs.env.Say("culprit %s %s: measuring it against its parent %s", revision.Short(culprit.Hash), culprit.Subject, revision.Short(parent.Hash))
	sr, err := bs.ab(ctx, fmt.Sprintf("%02d-culprit-%s", bs.steps, revision.Short(culprit.Hash)), parent, culprit, adding{precision: math.Abs(bs.track.logTotal()) / 4, explain: true, counts: true})
	if err != nil {
		return err
	}
	own := &OwnChange{Parent: parent}
	bs.rep.Own = own
	if sr.unbuilt != nil {
		own.Note = "not measured: " + sr.unbuilt.Error()
		return bs.unclaim("the search ended at %s, whose own A/B against its parent %s could not run (%v)", revision.Short(culprit.Hash), revision.Short(parent.Hash), sr.unbuilt)
	}
	if rel, err := filepath.Rel(bs.opts.Out, filepath.Join(sr.dir, "ab.txt")); err == nil {
		own.File = rel
	}
	var table strings.Builder
	names := []string{fmt.Sprintf("parent (%s)", revision.Short(parent.Hash)), fmt.Sprintf("culprit (%s)", revision.Short(culprit.Hash))}
	if err := sr.ts.Markdown(&table, names); err == nil {
		own.Table = table.String()
	}
	d := bs.decision(sr.ts)
	if d == nil {
		own.Note = "the culprit's A/B has no " + bs.track.row + " row"
		return bs.unclaim("the A/B of %s against its parent has no %s %s row", revision.Short(culprit.Hash), bs.track.row, bs.track.unit)
	}
	own.Change, own.Verdict = changeOf(d.Change), d.Verdict.String()
	e := quotient(d.Change, bs.track.total.Change)
	own.Explains = &e
	if !confirms(d, bs.track.total) {
		// The search ended here, but the commit's own change is not the
		// change searched for: claiming it would blame a commit for the
		// noise of the steps.
		way := map[bool]string{true: "worse", false: "better"}[bs.track.total.Worse]
		return bs.unclaim("the search ended at %s, but its own A/B against its parent %s is %s, %+.2f %% [%+.2f, %+.2f], not a change for the %s: the range's change may be spread over several commits, or within the noise of the steps",
			revision.Short(culprit.Hash), revision.Short(parent.Hash), d.Verdict, d.Change.Pct(), ratioPct(d.Change.Lo), ratioPct(d.Change.Hi), way)
	}
	own.explained(sr.explained, bs.opts.Out)
	if base, tip, ok := bs.repo.Merged(culprit.Hash); ok {
		own.Note = fmt.Sprintf("%s is a merge: its change came with the branch it merged; bisect that branch with --good %s --bad %s",
			revision.Short(culprit.Hash), revision.Short(base), revision.Short(tip))
		bs.env.Say("%s", own.Note)
	}
	if e.Hi < 0.8 {
		note := restNote(e, culprit, parent, bs.good, bs.bad)
		own.Note = strings.TrimSpace(own.Note + " " + note)
		bs.env.Say("%s", note)
	}
	return nil
}

// restNote says that a culprit explains only share e of the whole change
// from good to bad, and how to bisect the rest: after the culprit, and
// before it unless its parent is the good end (no range is left there).
func restNote(e Position, culprit, parent, good, bad revision.Commit) string {
	note := fmt.Sprintf("it explains only %.0f %% of the change: the range holds another; bisect the rest with --good %s --bad %s",
		100*e.Share, revision.Short(culprit.Hash), revision.Short(bad.Hash))
	if parent.Hash != good.Hash {
		note += fmt.Sprintf(", and the part before it with --good %s --bad %s", revision.Short(good.Hash), revision.Short(parent.Hash))
	}
	return note
}

// unclaim ends a search whose last bad commit its own A/B against its
// parent does not confirm, saying why: no culprit is claimed, the commit
// is named as where the search ended (Candidate), exit 1.
func (bs *bisector) unclaim(why string, args ...any) error {
	bs.rep.Candidate, bs.rep.Culprit = bs.rep.Culprit, nil
	return bisectError("no culprit claimed: "+why, args...)
}

// shortList names commits by their short hashes.
func shortList(cs []revision.Commit) string {
	var s []string
	for _, c := range cs {
		s = append(s, revision.Short(c.Hash))
	}
	return strings.Join(s, " ")
}
