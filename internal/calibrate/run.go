package calibrate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
	"github.com/ledgerbench/ledgerbench/internal/ab"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// Options are one calibration's.
type Options struct {
	// Trials comparisons of Group rounds each: Trials × Group forks a side.
	Trials, Group int
	// Alpha and MinChange (percent) are ab's verdicts' (compare.ABOptions).
	Alpha, MinChange float64
	// Pair, "PARAM=BASE,CHANGED", runs side B at PARAM=CHANGED where side
	// A runs PARAM=BASE; Plant, instead, makes side B slower by that share
	// (0.02 for 2 %). Without either, both sides run the same (an A/A).
	Pair  string
	Plant float64
	// Detect, when set, also replays ab --detect at that detectable change
	// on the rounds, a comparison taking at most Budget's worth of them.
	Detect float64
	Budget time.Duration
	// UntilDecided, when above 0, also replays ab --until-decided on the
	// rounds: every benchmark's rows at once, each comparison stopping at
	// any round up to UntilDecided.
	UntilDecided int
	// From, when set, reports again on an earlier run's raw results
	// (its aa.txt), measuring nothing; Pair then only says it is a known
	// change.
	From string
	// Engine runs the forks (its Forks is Trials × Group); Cases are the
	// planned cases.
	Engine engine.Options
	Cases  []engine.Case
	// Dir is the user's source tree; Out the directory of aa.txt,
	// calibration.md and calibration.json ("" = results/calibration/<UTC
	// stamp>; with From, the directory that holds it).
	Dir, Out string
	// Host is how to prepare the host.
	Host session.HostOptions
}

// Defaults are a calibration's: 200 comparisons of 5 rounds, ab's
// significance level and margin.
func Defaults() Options {
	return Options{Trials: 200, Group: 5, Alpha: compare.DefaultAlpha, MinChange: compare.DefaultMinChange, Engine: engine.DefaultOptions()}
}

// compareOptions are the options under which ab decides its rows, at the
// calibration's Alpha and MinChange: calibrate decides its comparisons
// through the same function.
func (o *Options) compareOptions() compare.Options {
	return ab.Verdicts(o.Alpha, o.MinChange, false)
}

// sequential replays ab --until-decided on cases (nil without
// UntilDecided), its looks decided under ab's options for it.
func (o *Options) sequential(cases []Case) *Sequential {
	if o.UntilDecided == 0 {
		return nil
	}
	s := SequentialRounds(cases, verdict.MinSamples, o.UntilDecided, ab.Verdicts(o.Alpha, o.MinChange, true))
	return &s
}

// check refuses options a calibration cannot run.
func (o *Options) check() error {
	switch {
	case o.Trials < 1 || o.Group < verdict.MinSamples:
		return session.Input("{Trials} %d {Group} %d: want at least 1 comparison of at least %d forks a side", o.Trials, o.Group, verdict.MinSamples)
	case o.Trials*o.Group > engine.MaxForks:
		return session.Input("{Trials} %d × {Group} %d = %d forks a side: at most %d", o.Trials, o.Group, o.Trials*o.Group, engine.MaxForks)
	case o.Plant < 0 || o.Plant > harness.MaxPlant:
		return session.Input("{Plant} %g %%: want a slowdown above 0 and at most %g %%", 100*o.Plant, 100*harness.MaxPlant)
	case o.UntilDecided != 0 && (o.UntilDecided < verdict.MinSamples || o.UntilDecided > o.Trials*o.Group):
		return session.Input("{UntilDecided} %d: a comparison stops at any round from %d up to this cap, at most the {Trials} × {Group} = %d rounds measured", o.UntilDecided, verdict.MinSamples, o.Trials*o.Group)
	case o.Pair != "" && o.Plant != 0:
		return session.Input("{Pair} and {Plant}: one known change at a time")
	}
	return session.CheckVerdicts(o.Alpha, o.MinChange)
}

// Run calibrates: it runs Trials × Group rounds of this very binary
// against itself (or a planted or paired change) as ab runs them, then
// writes and returns the report of ab's verdicts on them. With From, it
// reports again on earlier results instead.
func Run(ctx context.Context, env *session.Env, o Options) (*Report, error) {
	if o.From != "" {
		return from(env, o)
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	o.Engine.Forks = o.Trials * o.Group
	pair, err := parsePair(o.Pair, o.Cases)
	if err != nil {
		return nil, err
	}
	s, err := session.Prepare(ctx, env, o.Host, &o.Engine)
	if err != nil {
		return nil, err
	}
	defer s.Release()
	if o.Out, err = session.OutDir(o.Out, "calibration"); err != nil {
		return nil, err
	}
	r, err := measureSides(ctx, s, o, pair)
	if err != nil {
		return nil, err
	}
	eo := o.Engine
	rep := newReport(r.Header, o, eo.Warmup.String(), eo.Measure.String(), modeName(eo), r.Runs[0].End.Sub(r.Runs[0].Start).Seconds()/float64(eo.Forks))
	rep.Planted = o.Plant
	rep.command, rep.hostNote, rep.Raw = env.Command, s.Check.Note(), filepath.Join(o.Out, "aa.txt")
	if err := rep.compute(o, pair != nil || o.Plant != 0, r.Runs); err != nil {
		return nil, err
	}
	if err := rep.write(o.Out); err != nil {
		return rep, err
	}
	return rep, r.Outcome(nil, o.Out)
}

// measureSides runs the calibration's forks: this binary on both sides,
// side B planted or at the pair's changed value. A run interrupted midway
// is an error: rates over the forks that ran would pass for the run asked
// for.
func measureSides(ctx context.Context, s *session.Session, o Options, pair *pairParam) (*session.Recorded, error) {
	exe, err := s.Env.SelfExecutable()
	if err != nil {
		return nil, err
	}
	self := engine.Program{Executable: exe}
	sides := []engine.Side{{Name: "A", Launch: self}, {Name: "B", Launch: self}}
	what, cases := "A/A: this binary on both sides", o.Cases
	var notes []string
	if o.Plant != 0 {
		sides[1].Plant = o.Plant
		what = fmt.Sprintf("side B planted +%g %%", 100*o.Plant)
		notes = append(notes, fmt.Sprintf("planted=%g: side B's measured windows spin on the clock for %g %% of their ops' time (calibrate --plant)", o.Plant, 100*o.Plant))
	}
	if pair != nil {
		cases, sides[1].Cases = pair.split(cases)
		what = fmt.Sprintf("side B runs %s=%s where side A runs %s=%s", pair.name, pair.changed, pair.name, pair.base)
	}
	s.Env.Say("%d cases × %d forks a side (%s), warmup %s, measure %s, %s → %s", len(cases), o.Engine.Forks, what, o.Engine.Warmup, o.Engine.Measure, modeName(o.Engine), o.Out)
	// Thousands of fork logs stay out of the results directory.
	logs, err := os.MkdirTemp("", "benchctl-calibrate-logs-")
	if err != nil {
		return nil, session.FailedError{Msg: err.Error()}
	}
	r, err := s.Record(ctx, &session.Recording{Options: o.Engine, Cases: cases, Dir: o.Dir, LogDir: logs, Sides: sides, Notes: notes,
		Out: session.ResultsFile{Path: filepath.Join(o.Out, "aa.txt"), Put: session.ReplaceFile}})
	s.Env.KeepLogs(logs, r, err)
	if err != nil {
		return nil, err
	}
	if r.Interrupted != nil {
		s.Env.Say("no calibration report: the run was interrupted; the forks that ran are in %s", r.Path)
		return nil, r.Interrupted
	}
	return r, nil
}

// from reports again on an earlier run's raw results, into the directory
// that holds them (or Out).
func from(env *session.Env, o Options) (*Report, error) {
	if err := session.CheckVerdicts(o.Alpha, o.MinChange); err != nil {
		return nil, err
	}
	runs, h, roundSeconds, err := ReadRuns(o.From)
	if err != nil {
		return nil, session.Input("{From}: %w", err)
	}
	data, _ := os.ReadFile(o.From)
	warmup, measured, mode := "?", "?", "interleaved"
	if m := regexp.MustCompile(`warmup=(\S+) measure=(\S+)`).FindSubmatch(data); m != nil {
		warmup, measured = string(m[1]), string(m[2])
	}
	if bytes.Contains(data, []byte("\n# benchctl: duet: ")) {
		mode = "duet"
	}
	rounds := roundsOf(runs[0])
	if o.Group < verdict.MinSamples || rounds/o.Group == 0 {
		return nil, session.Input("{Group} %d: %s holds %d rounds", o.Group, o.From, rounds)
	}
	o.Trials = rounds / o.Group
	rep := newReport(h, o, warmup, measured, mode, roundSeconds)
	if o.Out == "" {
		o.Out = filepath.Dir(o.From)
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, session.FailedError{Msg: err.Error()}
	}
	if m := regexp.MustCompile(`\n# benchctl: planted=(\S+):`).FindSubmatch(data); m != nil {
		rep.Planted, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	if o.Plant == 0 {
		// The yardsticks are planned for the planted change, as the
		// live run planned them, not for the change the rounds show.
		o.Plant = rep.Planted
	}
	rep.command, rep.hostNote, rep.Raw = env.Command, "as recorded in "+o.From, o.From
	if err := rep.compute(o, o.Pair != "" || rep.Planted != 0, runs); err != nil {
		return nil, err
	}
	return rep, rep.write(o.Out)
}

// newReport is the report's heading: the machine, the plan and the
// machine time of a round.
func newReport(h report.Header, o Options, warmup, measured, mode string, roundSeconds float64) *Report {
	return &Report{MachineID: h.MachineID, EnvID: h.EnvID, HostPinned: h.HostPinned, Alpha: o.Alpha, MinChange: o.MinChange,
		Trials: o.Trials, Group: o.Group, Warmup: warmup, Measure: measured, Mode: mode, RoundSeconds: roundSeconds}
}

func modeName(o engine.Options) string {
	if o.Duet {
		return "duet"
	}
	return "interleaved"
}
