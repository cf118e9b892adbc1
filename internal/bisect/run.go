package bisect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/profile"
	"github.com/ledgerbench/ledgerbench/internal/revision"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// Options are one bisection's.
type Options struct {
	// Good and Bad are the ends: revisions without and with the change,
	// Good on Bad's first-parent history.
	Good, Bad string
	// Program is the benchmark program's main package ("" = the one the
	// running binary was built from); Packages, instead, are Go package
	// patterns whose test binaries are bisected.
	Program  string
	Packages []string
	// Cases are the program's planned cases (ignored for Packages).
	Cases []engine.Case
	// Engine runs every A/B: Forks is the rounds each starts from.
	Engine engine.Options
	// Metric is the unit followed ("" = the time or throughput);
	// Direction "worse" (slower, more bytes) or "better".
	Metric, Direction string
	// Alpha and MinChange (percent) are each A/B's verdicts' (as ab's).
	Alpha, MinChange float64
	// Budget is the most machine time one step may spend adding rounds.
	Budget time.Duration
	// BuildCache keeps builds by tree hash ("" or "off": none).
	BuildCache string
	// Dir is the user's source tree ("" = the current directory); Out
	// the directory of bisect.md, bisect.json and steps/ ("" =
	// results/bisect/<UTC stamp>; one that holds results is refused).
	Dir, Out string
	// Host is how to prepare the host.
	Host session.HostOptions
	// Explain, unless ab.ExplainOff, explains the culprit's own change by
	// its functions (ab.ExplainRows: ExplainRounds CPU profiling forks a
	// side of the row followed, against its parent).
	Explain       ab.Explain
	ExplainRounds int
	// Remote, when set, measures every A/B on a fleet (ab.Remote) in
	// batches of rounds; Parallel commits are then probed at once, each
	// by its own agent (SearchParallel; 0 or 1: one at a time).
	Remote   ab.Remote
	Parallel int
}

// Defaults are a bisection's defaults beside the engine's: the worse
// direction, ab's significance level and margin.
func Defaults() Options {
	return Options{Direction: "worse", Alpha: compare.DefaultAlpha, MinChange: compare.DefaultMinChange, Engine: engine.ABOptions()}
}

// Check refuses options a bisection cannot run, before anything is built.
func (o *Options) Check() error {
	switch {
	case o.Good == "" || o.Bad == "":
		return session.Input("{Good} and {Bad} are required")
	case o.Good == "." || o.Bad == ".":
		return usageError(errors.New("bisect measures commits, not the working tree: commit the changes and name the commit"))
	case o.Direction != "worse" && o.Direction != "better":
		return session.Input("{Direction} %q: worse or better", o.Direction)
	case o.Program != "" && len(o.Packages) > 0:
		return session.Input("{Program} names a benchmark program; with package arguments bisect builds their test binaries")
	case o.Engine.Forks == 0:
		return session.Input("bisect needs forks: {Forks} 0 cannot run two binaries")
	case len(o.Engine.Profiles) > 0 && !slices.Equal(o.Engine.Profiles, []profile.Kind{profile.Instructions}):
		return session.Input("{Profiles} %v is not supported by bisect: it takes instructions alone, which it counts for the culprit and its parent to explain the culprit by its instructions; profile them with run {Profiles}", o.Engine.Profiles)
	case len(o.Engine.Profiles) > 0 && o.Remote != nil:
		return session.Input("{Profiles} instructions counts on this machine, where the culprit is explained: not with {Fleet}")
	case o.Engine.Forks < engine.PrecisionForks:
		return session.Input("{Forks} %d: a bisection's steps add rounds, starting from at least %d", o.Engine.Forks, engine.PrecisionForks)
	}
	if err := ab.CheckExplainRounds(o.ExplainRounds); err != nil {
		return err
	}
	if err := o.checkRemote(); err != nil {
		return err
	}
	return session.CheckVerdicts(o.Alpha, o.MinChange)
}

// Run bisects: it resolves the range, prepares the host, confirms the
// ends, searches the range, measures the culprit against its parent and
// writes the report into o.Out. The report comes back with every error
// raised after the range was resolved (an empty Out writes none).
func Run(ctx context.Context, env *session.Env, o Options) (*Report, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	repo, err := ab.OpenRepo(o.Dir)
	if err != nil {
		return nil, err
	}
	bs := &bisector{env: env, opts: o, o: o.Engine, repo: repo, start: time.Now()}
	if err := bs.resolve(); err != nil {
		return nil, err
	}
	if len(o.Packages) == 0 {
		if bs.prog, err = ab.FindProgram(o.Dir, repo, o.Program); err != nil {
			return nil, err
		}
	}
	s, err := session.Prepare(ctx, env, o.Host, &bs.o)
	if err != nil {
		return nil, err
	}
	defer s.Release()
	bs.s = s
	if bs.opts.Out, err = session.OutDir(o.Out, "bisect"); err != nil {
		return nil, err
	}
	err = bs.run(ctx)
	return &bs.rep, err
}

// Within bisects on a session prepared by the caller (nightly, which
// bisects the regressions it found with the night's host and program):
// prog is the program to build at each commit, nil for Packages. The
// report comes back with any error raised after the range was resolved.
func Within(ctx context.Context, s *session.Session, repo *revision.Repo, prog *revision.Program, o Options) (*Report, error) {
	bs := &bisector{env: s.Env, s: s, opts: o, o: o.Engine, repo: repo, prog: prog, start: time.Now()}
	if err := bs.resolve(); err != nil {
		return nil, err
	}
	err := bs.run(ctx)
	return &bs.rep, err
}

// DefaultBuildCache is where builds are kept by default ("off" when the
// user has no cache directory).
func DefaultBuildCache() string {
	d, err := revision.DefaultCacheDir()
	if err != nil {
		return "off"
	}
	return d
}

// Cache is the cache of o.BuildCache, or nil ("off", or none given).
func (o *Options) Cache() *revision.BuildCache { return revision.OpenCache(o.BuildCache) }

// StepsDir is the directory, under Out, of the steps' raw files.
const StepsDir = session.BisectSteps

func usageError(err error) error { return session.UsageError{Err: err} }

func failedError(msg string) error { return session.FailedError{Msg: msg} }

// bisectError ends a bisection that found no culprit, after its report.
func bisectError(format string, args ...any) error { return failedError(fmt.Sprintf(format, args...)) }

// stepNote says what a step's verdict means, for the report.
func stepNote(v Verdict) string {
	switch v {
	case Bad:
		return "has the change"
	case Good:
		return "has not"
	case Skipped:
		return "not measured"
	}
	return "undecided within the budget"
}
