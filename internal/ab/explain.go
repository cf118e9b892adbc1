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
// profiling fork: about 100 CPU samples at runtime/pprof's rate.
const MinExplainWindow = time.Second

// explainWindow is the measured window of an explaining profiling fork
// of a run measured by m: one iteration as long as m's together, at
// least MinExplainWindow (m itself when it counts ops, not time).
func explainWindow(m result.IterSpec) result.IterSpec {
	if m.Ops > 0 || m.Time <= 0 {
		return m
	}
	return result.IterSpec{Count: 1, Time: max(time.Duration(max(m.Count, 1))*m.Time, MinExplainWindow)}
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
}

// explainEngine is how x's profiling forks run: CPU profiles only,
// x.Rounds of them a side (DefaultExplainRounds by default), in their own
// windows.
func explainEngine(x Explaining) engine.Options {
	eo := x.Engine
	eo.Profiles, eo.ProfileRounds, eo.Measure, eo.Warmup = []profile.Kind{profile.CPU}, x.Rounds, explainWindow(eo.Measure), explainWarmup(eo.Warmup)
	if eo.ProfileRounds == 0 {
		eo.ProfileRounds = DefaultExplainRounds
	}
	return eo
}

// explainCost is the planned time of eo's profiling forks of rows rows
// on both sides.
func explainCost(eo engine.Options, rows int) time.Duration {
	eo.Forks, eo.Duet = eo.ProfileRounds, false
	return engine.FirstRounds(eo, rows)
}

// ExplainRows profiles the cases of set that x.Mode selects from ts (the
// set's A/B, decided) on both sides, x.Rounds rounds each, and explains
// each into x.Dir/<row>.
func ExplainRows(ctx context.Context, s *session.Session, set *Sides, root string, ts *compare.Tables, x Explaining) []Explained {
	var cases []engine.Case
	var ratios []float64
	for _, c := range set.Cases {
		ratio, changed := ts.TimeChange(c.Name())
		if changed || x.Mode == ExplainAll {
			cases, ratios = append(cases, c), append(ratios, ratio)
		}
	}
	if len(cases) == 0 || x.Mode == ExplainOff {
		return nil
	}
	eo := explainEngine(x)
	if cost := explainCost(eo, len(cases)); x.Budget > 0 && cost > x.Budget {
		out := make([]Explained, len(cases))
		for i, c := range cases {
			out[i] = Explained{Case: c.Name(), Err: fmt.Errorf("not explained: its %d profiling forks a side would take about %s, and the budget leaves %s (explain it again without a budget, or with a larger one)",
				eo.ProfileRounds, cost.Round(time.Second), max(x.Budget, 0).Round(time.Second))}
		}
		return out
	}
	s.Env.Say("explaining %d row(s) by their functions: %d CPU profiling forks a side each → %s", len(cases), eo.ProfileRounds, x.Dir)
	logs := filepath.Join(x.Dir, "logs")
	runs, failed, err := s.Profile(ctx, &session.Recording{Options: eo, Cases: cases, Sides: set.Sides, Revs: set.Revs, Dir: root,
		LogDir: logs, ProfileDir: filepath.Join(x.Dir, "profiles")})
	if err == nil && failed == 0 {
		os.RemoveAll(logs) // as a measurement's: kept only when a fork failed
	}
	out := make([]Explained, len(cases))
	for i, c := range cases {
		out[i] = Explained{Case: c.Name(), Dir: filepath.Join(x.Dir, caseDir(c.Name()))}
		if err != nil {
			out[i].Err = fmt.Errorf("profiling interrupted: %v", err)
			continue
		}
		out[i].Report, out[i].Err = explainCase(out[i].Dir, c.Name(), runs[0].Cases[i].Profiles, runs[1].Cases[i].Profiles, x.Alpha, ratios[i])
	}
	return out
}

// explainCase compares a case's profiles of both sides and writes its
// directory.
func explainCase(dir, name string, base, exp []result.ProfileRun, alpha, ratio float64) (*explain.Report, error) {
	b, err := explain.Load(base)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	e, err := explain.Load(exp)
	if err != nil {
		return nil, fmt.Errorf("experiment: %w", err)
	}
	r, err := explain.Diff(b, e, alpha, ratio)
	if err != nil {
		return nil, err
	}
	return r, explain.Write(dir, name, b, e, r)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._=-]+`)

// caseDir is a case's directory name: its name with every run of other
// characters than letters, digits and ._=- made one underscore.
func caseDir(name string) string {
	return unsafeName.ReplaceAllString(strings.TrimPrefix(name, "Benchmark"), "_")
}
