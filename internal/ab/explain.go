package ab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/explain"
	"github.com/ledgerbench/ledgerbench/internal/profile"
	"github.com/ledgerbench/ledgerbench/internal/revision"
	"github.com/ledgerbench/ledgerbench/internal/session"
)

// Explain says which rows an A/B comparison explains by their functions
// (package explain): their CPU profiles on both sides, in profiling forks
// after the measured ones.
type Explain int

const (
	// ExplainChanged, the default, explains the rows whose time or
	// throughput changed.
	ExplainChanged Explain = iota
	// ExplainOff explains none.
	ExplainOff
	// ExplainAll explains every compared row.
	ExplainAll
)

// ParseExplain reads --explain's value: changed, off or all.
func ParseExplain(s string) (Explain, error) {
	switch s {
	case "changed", "":
		return ExplainChanged, nil
	case "off":
		return ExplainOff, nil
	case "all":
		return ExplainAll, nil
	}
	return 0, session.Input("{Explain} %q: changed (the rows whose time changed), all or off", s)
}

// MinExplainWindow is the shortest measured window of an explaining
// profiling fork sampled by runtime/pprof: about 100 CPU samples at its
// rate.
const MinExplainWindow = time.Second

// explainWindow is the measured window of an explaining profiling fork
// of a run measured by m: one iteration as long as m's together (m itself
// when it counts ops, not time). Sampled by runtime/pprof, it lasts at
// least MinExplainWindow; sampled by perf (sampled), whose 10,000 samples
// a CPU-second need no floor, at most engine.SampledWindow, which the
// engine applies.
func explainWindow(m result.IterSpec, sampled bool) result.IterSpec {
	if m.Ops > 0 || m.Time <= 0 {
		return m
	}
	w := time.Duration(max(m.Count, 1)) * m.Time
	if !sampled {
		w = max(w, MinExplainWindow)
	}
	return result.IterSpec{Count: 1, Time: w}
}

// allocsWindow is the measured window of an explanation's allocation
// fork of a run measured by m: one of m's iterations. Every allocation is
// recorded, so the counts per op need no more ops than that; the CPU
// profiles' longer window is for their samples.
func allocsWindow(m result.IterSpec) result.IterSpec {
	m.Count = 1
	return m
}

// explainWarmup is the warmup of an explaining profiling fork of a run
// warmed up by w: its first iteration only. The profile attributes the
// window's time to functions, both sides alike; it is no measurement, so
// it does not need the measured forks' steady state, and the rest of
// their warmup would cost as much again as the window.
func explainWarmup(w result.IterSpec) result.IterSpec {
	w.Count = min(w.Count, 1)
	return w
}

// CheckExplainRounds refuses fewer profiling forks a side than a
// function's interval needs (0 is the default).
func CheckExplainRounds(rounds int) error {
	if rounds != 0 && (rounds < explain.MinPairs || rounds > engine.MaxForks) {
		return session.Input("{ExplainRounds} %d: a function's change needs %d to %d pairs of profiles", rounds, explain.MinPairs, engine.MaxForks)
	}
	return nil
}

// DefaultExplainRounds is the profiling forks of each side of an
// explained row: the pairs its functions' intervals come from.
const DefaultExplainRounds = 5

// ExplainDir is where an A/B's explanations go, in its Out.
const ExplainDir = "explain"

// Explained is one row explained: its report, the directory of its
// profiles, difference profile, text and flame graph, or why it could not
// be explained (the verdict stands either way).
type Explained struct {
	Case   string
	Dir    string
	Report *explain.Report
	Err    error
	// Instructions is the row explained by its instructions per op, when
	// the A/B counted them (its instructions forks, one a side); else nil,
	// with InstructionsErr saying why when it was asked.
	Instructions    *explain.InstructionsReport
	InstructionsErr error
	// Allocs is the row explained by its allocations per op, from one
	// profiling fork a side that records every allocation; AllocsErr says
	// why not.
	Allocs    *explain.AllocsReport
	AllocsErr error
}

// ExplainTop is how many named functions a row's line gives.
const ExplainTop = 3

// Line is the row's named functions, at most ExplainTop, on one line;
// "" when none is named, and then Why says why.
func (e Explained) Line() string {
	if e.Err != nil || e.Report == nil {
		return ""
	}
	return e.Report.Line(ExplainTop)
}

// Functions is every function named in the row: by CPU (Line), by
// allocations and by instructions, each method's part after the one
// before; "" when none is named.
func (e Explained) Functions() string {
	var parts []string
	for _, l := range []string{e.Line(), e.allocsNamed(), e.instructionsNamed()} {
		if l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

// allocsNamed is the row's functions named by allocations, at most
// ExplainTop; "" when none is (or they could not be read).
func (e Explained) allocsNamed() string {
	if e.AllocsErr != nil || e.Allocs == nil {
		return ""
	}
	return labelled("allocations: ", e.Allocs.Line(ExplainTop))
}

// instructionsNamed is the row's functions named by instructions, at most
// ExplainTop; "" when none is (or they were not counted).
func (e Explained) instructionsNamed() string {
	if e.InstructionsErr != nil || e.Instructions == nil {
		return ""
	}
	return labelled("by instructions: ", e.Instructions.Line(ExplainTop))
}

// labelled is line after its label, or "" when line is.
func labelled(label, line string) string {
	if line == "" {
		return ""
	}
	return label + line
}

// AllocsLine is the row's functions by allocations, at most ExplainTop,
// or why they could not be read; "" when none is named.
func (e Explained) AllocsLine() string {
	if e.AllocsErr != nil {
		return "allocations not explained: " + e.AllocsErr.Error()
	}
	return e.allocsNamed()
}

// InstructionsLine is the row's functions by instructions, at most
// ExplainTop, or why none is named; "" when they were not counted.
func (e Explained) InstructionsLine() string {
	switch {
	case e.InstructionsErr != nil:
		return "instructions not explained: " + e.InstructionsErr.Error()
	case e.Instructions == nil:
		return ""
	}
	if l := e.instructionsNamed(); l != "" {
		return l
	}
	return fmt.Sprintf("by instructions: no function's count changed by %g %% of the op's (%s in all)", 100*explain.InstructionsFloor, e.Instructions.Change())
}

// Why says why the row names no function: it could not be explained, or
// its change is below what its profiles resolve.
func (e Explained) Why() string {
	if e.Err != nil {
		return "not explained: " + e.Err.Error()
	}
	return fmt.Sprintf("no function named (CPU per op %s): the change is spread thinly, or below what these profiles resolve", e.Report.Total)
}

// Explaining is what ExplainRows is asked: which rows (Mode), from how
// many profiling forks a side (Rounds, 0: DefaultExplainRounds), at what
// false-discovery rate over the functions, with which engine options,
// into which directory.
type Explaining struct {
	Mode   Explain
	Rounds int
	Alpha  float64
	Engine engine.Options
	Dir    string
	// Budget, when above 0, is what a budgeted comparison's budget leaves:
	// rows whose profiling forks would take longer are not explained, and
	// say so.
	Budget time.Duration
	// Runs are the A/B's measured runs, baseline then experiment: their
	// speed sizes a go test row's profiling forks, and the rows'
	// instructions forks, when it counted instructions, explain them by
	// instructions too.
	Runs []*result.Run
}

// explainEngine is how x's profiling forks run: CPU profiles only,
// x.Rounds of them a side (DefaultExplainRounds by default), in their own
// windows.
func explainEngine(x Explaining) engine.Options {
	eo := x.Engine
	// Sampled by perf where it can (10,000 samples a CPU-second, in a
	// window of at most engine.SampledWindow), else by runtime/pprof.
	sampled, _ := profile.SampleStatus()
	eo.Profiles, eo.ProfileRounds, eo.Measure, eo.Warmup = []profile.Kind{profile.CPU}, x.Rounds, explainWindow(eo.Measure, sampled), explainWarmup(eo.Warmup)
	if eo.ProfileRounds == 0 {
		eo.ProfileRounds = DefaultExplainRounds
	}
	eo.PerfSampling = true
	// A go test fork profiles at a fixed b.N, the same on both sides,
	// sized by the slower side's measured speed: neither side's window is
	// longer than the explanation's.
	eo.NsPerOp = map[string]float64{}
	for _, run := range x.Runs {
		for _, cr := range run.Cases {
			eo.NsPerOp[cr.Case.Name()] = max(eo.NsPerOp[cr.Case.Name()], engine.MeanNs(cr))
		}
	}
	return eo
}

// ExplainRows profiles the cases of set that x.Mode selects from ts (the
// set's A/B, decided) on both sides, x.Rounds rounds each, and explains
// each into x.Dir/<row>.
func ExplainRows(ctx context.Context, s *session.Session, set *Sides, root string, ts *compare.Tables, x Explaining) []Explained {
	var cases []engine.Case
	var levels []explain.Level
	for _, c := range set.Cases {
		change, changed := ts.TimeChange(c.Name())
		if changed || x.Mode == ExplainAll {
			// The measured change levels the profiles whether or not it
			// is decided: its interval says how much it weighs.
			l := explain.Level{Ratio: change.Ratio, Lo: change.Lo, Hi: change.Hi, Alpha: ts.Options.Alpha, Changed: changed}
			cases, levels = append(cases, c), append(levels, l)
		}
	}
	if len(cases) == 0 || x.Mode == ExplainOff {
		return nil
	}
	out := explainProfiles(ctx, s, set, root, cases, levels, x)
	src := sources(root, set.Revs)
	for i := range out {
		dir := filepath.Join(x.Dir, caseDir(out[i].Case))
		out[i].Instructions, out[i].InstructionsErr = explainInstructions(dir, out[i].Case, x.Runs, src)
		if out[i].Instructions != nil {
			out[i].Dir = dir
		}
	}
	return out
}

// explainProfiles explains cases by their CPU profiles, taken in x.Rounds
// profiling forks a side, and by their allocations, from one fork a side
// that records every allocation.
func explainProfiles(ctx context.Context, s *session.Session, set *Sides, root string, cases []engine.Case, levels []explain.Level, x Explaining) []Explained {
	eo := explainEngine(x)
	ea := eo
	ea.Profiles, ea.ProfileRounds, ea.Measure = []profile.Kind{profile.Allocs}, 1, allocsWindow(x.Engine.Measure)
	if cost := engine.ProfileRounds(eo, profile.CPU, len(cases)) + engine.ProfileRounds(ea, profile.Allocs, len(cases)); x.Budget > 0 && cost > x.Budget {
		out := make([]Explained, len(cases))
		for i, c := range cases {
			out[i] = Explained{Case: c.Name(), Err: fmt.Errorf("not explained: its %d profiling forks a side would take about %s, and the budget leaves %s (explain it again without a budget, or with a larger one)",
				eo.ProfileRounds+1, cost.Round(time.Second), max(x.Budget, 0).Round(time.Second))}
		}
		return out
	}
	sampler := "sampled by perf"
	if ok, why := profile.SampleStatus(); !ok {
		sampler = "sampled by runtime/pprof: " + why
	}
	s.Env.Say("explaining %d row(s) by their functions: %d CPU profiling forks a side each (%s) and one of their allocations → %s", len(cases), eo.ProfileRounds, sampler, x.Dir)
	logs := filepath.Join(x.Dir, "logs")
	rec := func(o engine.Options) *session.Recording {
		return &session.Recording{Options: o, Cases: cases, Sides: set.Sides, Revs: set.Revs, Dir: root, LogDir: logs, ProfileDir: filepath.Join(x.Dir, "profiles")}
	}
	runs, failed, err := s.Profile(ctx, rec(eo))
	var allocs []*result.Run
	var afailed int
	var aerr error
	if err == nil {
		allocs, afailed, aerr = s.Profile(ctx, rec(ea))
	}
	if err == nil && aerr == nil && failed+afailed == 0 {
		os.RemoveAll(logs) // as a measurement's: kept only when a fork failed
	}
	out := make([]Explained, len(cases))
	for i, c := range cases {
		out[i] = Explained{Case: c.Name(), Dir: filepath.Join(x.Dir, caseDir(c.Name()))}
		if err != nil {
			out[i].Err = fmt.Errorf("profiling interrupted: %v", err)
			continue
		}
		out[i].Report, out[i].Err = explainCase(out[i].Dir, c.Name(), runs[0].Cases[i].Profiles, runs[1].Cases[i].Profiles, x.Alpha, levels[i])
		if aerr != nil {
			out[i].AllocsErr = fmt.Errorf("profiling interrupted: %v", aerr)
			continue
		}
		out[i].Allocs, out[i].AllocsErr = explainAllocs(out[i].Dir, c.Name(), allocs[0].Cases[i].Profiles, allocs[1].Cases[i].Profiles)
	}
	return out
}

// sideNames name an A/B's two sides in what an explanation says.
var sideNames = [2]string{"baseline", "experiment"}

// explainAllocs compares a case's allocation profiles of both sides and
// writes the report into dir.
func explainAllocs(dir, name string, base, exp []result.ProfileRun) (*explain.AllocsReport, error) {
	var counted [2]*explain.Allocated
	for i, side := range [][]result.ProfileRun{base, exp} {
		if len(side) != 1 {
			return nil, fmt.Errorf("%d allocation profiles of the %s, want one", len(side), sideNames[i])
		}
		a, err := explain.CountAllocs(side[0])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sideNames[i], err)
		}
		counted[i] = a
	}
	r := explain.CompareAllocs(counted[0], counted[1])
	return r, explain.WriteAllocs(dir, name, r)
}

// explainCase compares a case's profiles of both sides and writes its
// directory.
func explainCase(dir, name string, base, exp []result.ProfileRun, alpha float64, level explain.Level) (*explain.Report, error) {
	var forks [2][]explain.Fork
	var failed []string
	for i, side := range [][]result.ProfileRun{base, exp} {
		fs, fails, err := explain.Load(side)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sideNames[i], err)
		}
		for _, f := range fails {
			failed = append(failed, sideNames[i]+": "+f)
		}
		forks[i] = fs
	}
	r, err := explain.Diff(forks[0], forks[1], alpha, level)
	if err != nil {
		if len(failed) > 0 {
			err = fmt.Errorf("%w (%s)", err, strings.Join(failed, "; "))
		}
		return nil, err
	}
	r.Notes = append(failed, r.Notes...)
	return r, explain.Write(dir, name, forks[0], forks[1], r)
}

// explainInstructions compares a case's instructions forks of both of
// runs and writes the report into dir; nil, nil when the runs counted no
// instructions.
func explainInstructions(dir, name string, runs []*result.Run, src [2]func(string) ([]byte, error)) (*explain.InstructionsReport, error) {
	if len(runs) != 2 {
		return nil, nil
	}
	var counted [2]*explain.Counted
	for i, side := range sideNames {
		pr, ok := instructionsFork(runs[i], name)
		if !ok {
			return nil, nil
		}
		c, err := explain.Count(pr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", side, err)
		}
		c.Source, counted[i] = src[i], c
	}
	r := explain.CompareCounts(counted[0], counted[1])
	return r, explain.WriteInstructions(dir, name, r)
}

// sources are the readers of both revisions' source files, or nil ones
// (the files as the paths name them) outside a repository.
func sources(root string, revs []revision.Revision) (src [2]func(string) ([]byte, error)) {
	if root == "" || len(revs) != 2 {
		return src
	}
	repo := &revision.Repo{Root: root}
	return [2]func(string) ([]byte, error){repo.Source(revs[0]), repo.Source(revs[1])}
}

// instructionsFork is the instructions fork of the case named name in
// run, if it ran one.
func instructionsFork(run *result.Run, name string) (result.ProfileRun, bool) {
	for _, cr := range run.Cases {
		if cr.Case.Name() != name {
			continue
		}
		for _, pr := range cr.Profiles {
			if pr.Kind == string(profile.Instructions) {
				return pr, true
			}
		}
	}
	return result.ProfileRun{}, false
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._=-]+`)

// caseDir is a case's directory name: its name with every run of other
// characters than letters, digits and ._=- made one underscore.
func caseDir(name string) string {
	return unsafeName.ReplaceAllString(strings.TrimPrefix(name, "Benchmark"), "_")
}
