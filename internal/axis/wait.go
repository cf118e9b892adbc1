package axis

import (
	"fmt"
	"math"
	"strings"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/result"
)

// QuickOver is the smallest change, as a fraction, run --quick
// --until-decided waits to decide: the quick answer is about the large
// effects, and a row whose change looks smaller is left undecided rather
// than given rounds. The verdicts are anytime-valid, so stopping on what
// the rounds showed keeps their error rate.
const QuickOver = 0.20

// Look is what one look of run --until-decided found of a case.
type Look int

const (
	// Decided: every comparison of the case's row is changed or same
	// (or the case is compared with nothing: a floor).
	Decided Look = iota
	// Small: no row of the case is waited for, and one is undecided
	// because its change looks smaller than the run waits for.
	Small
	// Open: a row of the case is undecided, and waited for: the case
	// gets another fork.
	Open
)

// Wait is run --until-decided's rule of which cases need more forks,
// looked at in the pull-request tables (Tables) of the results so
// far: a case at another value of its axis while its comparison with
// the baseline is undecided, a baseline case while any comparison of its
// row is; with Over above 0, not a row whose change (as a fraction)
// looks smaller than Over.
type Wait struct {
	cases  []result.Case
	byName map[string]result.Case
	// Over is the smallest change waited for (0: every row).
	Over float64
}

// NewWait is the rule for the planned cases, waiting for changes of at
// least over (0: every row).
func NewWait(cases []result.Case, over float64) *Wait {
	w := &Wait{cases: cases, byName: map[string]result.Case{}, Over: over}
	for _, c := range cases {
		w.byName[c.Name()] = c
	}
	return w
}

// Decide is the session's Decide (session.Recording.Decide): whether a case needs no more forks.
func (w *Wait) Decide(data []byte) (func(string) bool, error) {
	return decide(w.Look(data))
}

// DecideOf is Decide of a run measured on several machines, each
// machine's files one of paths (TablesOf).
func (w *Wait) DecideOf(paths []string) (func(string) bool, error) {
	return decide(w.LookOf(paths))
}

func decide(look func(string) (Look, *compare.Decision), err error) (func(string) bool, error) {
	if err != nil {
		return nil, err
	}
	return func(name string) bool {
		l, _ := look(name)
		return l != Open
	}, nil
}

// Look decides the rows of the results file data and says of each case
// what it found, with the decision of its comparison (nil for a baseline
// case or a floor).
func (w *Wait) Look(data []byte) (func(string) (Look, *compare.Decision), error) {
	tables, err := Tables(data, w.cases, true)
	if err != nil {
		return nil, err
	}
	return w.look(tables), nil
}

// LookOf is Look of a run measured on several machines, each machine's
// files one of paths (TablesOf).
func (w *Wait) LookOf(paths []string) (func(string) (Look, *compare.Decision), error) {
	tables, err := TablesOf(paths, w.cases, true)
	if err != nil {
		return nil, err
	}
	return w.look(tables), nil
}

// look says of each case what tables found.
func (w *Wait) look(tables []Table) func(string) (Look, *compare.Decision) {
	return func(name string) (Look, *compare.Decision) {
		c, ok := w.byName[name]
		switch {
		case !ok:
			return Open, nil
		case c.Axis == "":
			return Decided, nil
		}
		value, _ := c.Params.Get(c.Axis)
		row := strings.Replace(c.Name(), "/"+c.Axis+"="+value, "", 1)
		for _, t := range tables {
			if t.name != c.Axis {
				continue
			}
			ds := t.ts.RowDecisions(row)
			if value != t.baseline {
				d := ds[value]
				return w.classify(d), d
			}
			if len(ds) == 0 {
				return Open, nil
			}
			l := Decided // the most any comparison of the row asks
			for _, d := range ds {
				l = max(l, w.classify(d))
			}
			return l, nil
		}
		return Open, nil
	}
}

// Count says of cases what look found: how many are decided, and, for
// each compared case whose row is not, its name and why, after forks(its
// name) forks.
func (w *Wait) Count(look func(string) (Look, *compare.Decision), cases []result.Case, forks func(name string) int) (decided int, undecided []string) {
	for _, c := range cases {
		l, d := look(c.Name())
		if l == Decided {
			decided++
		} else if v, _ := c.Params.Get(c.Axis); v != c.Baseline {
			undecided = append(undecided, c.Name()+" "+w.Why(l, d, forks(c.Name())))
		}
	}
	return decided, undecided
}

// classify is what a comparison's decision asks of its cases.
func (w *Wait) classify(d *compare.Decision) Look {
	switch {
	case d == nil:
		return Open
	case d.Decided():
		return Decided
	case w.Over > 0 && d.Err == nil && math.Abs(d.Change.Ratio-1) < w.Over:
		return Small
	}
	return Open
}

// Why says why a compared case's row is undecided.
func (w *Wait) Why(l Look, d *compare.Decision, forks int) string {
	if d == nil || d.Err != nil {
		return fmt.Sprintf("no decision after %d forks (failed forks or no ratio)", forks)
	}
	s := fmt.Sprintf("%s after %d forks", d.Change.Interval(), d.Change.N)
	if l == Small {
		return s + fmt.Sprintf(": looks under %g %%, not waited for", w.Over*100)
	}
	return s + ": still undecided when the budget was spent"
}
