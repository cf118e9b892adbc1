package benchctl

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// Run --quick --until-decided adds rounds until every change of at least
// quickDecideOver is decided, within quickBudget: the quick answer is
// about the large effects, and a row whose change looks smaller is left
// undecided rather than given rounds.
// The verdicts are anytime-valid, so stopping on what the rounds showed
// keeps their error rate.
const (
	quickDecideOver = 0.20
	quickBudget     = 4 * time.Minute
)

// caseLook is what one look of run --until-decided found of a case.
type caseLook int

const (
	// lookDecided: every comparison of the case's row is changed or same
	// (or the case is compared with nothing: a floor).
	lookDecided caseLook = iota
	// lookSmall: no row of the case is waited for, and one is undecided
	// because its change looks smaller than the run waits for.
	lookSmall
	// lookOpen: a row of the case is undecided, and waited for: the case
	// gets another fork.
	lookOpen
)

// rowWait is run --until-decided's rule of which cases need more forks,
// looked at in the pull-request tables (axisTables) of the results so
// far: a case at another value of its axis while its comparison with
// the baseline is undecided, a baseline case while any comparison of its
// row is; with over above 0, not a row whose change (as a fraction)
// looks smaller than over.
type rowWait struct {
	cases  []result.Case
	byName map[string]result.Case
	over   float64
}

func newRowWait(cases []result.Case, over float64) *rowWait {
	w := &rowWait{cases: cases, byName: map[string]result.Case{}, over: over}
	for _, c := range cases {
		w.byName[c.Name()] = c
	}
	return w
}

// quickWait is the rule of run --quick --until-decided: waiting for the
// large changes only.
func quickWait(o engine.Options) float64 {
	if o.UntilDecided && o.Quick {
		return quickDecideOver
	}
	return 0
}

// decide is the session's Decide: whether a case needs no more forks.
func (w *rowWait) decide(data []byte) (func(string) bool, error) {
	look, err := w.look(data)
	if err != nil {
		return nil, err
	}
	return func(name string) bool {
		l, _ := look(name)
		return l != lookOpen
	}, nil
}

// look decides the rows of the results file data and says of each case
// what it found, with the decision of its comparison (nil for a baseline
// case or a floor).
func (w *rowWait) look(data []byte) (func(string) (caseLook, *compare.Decision), error) {
	tables, err := axisTables(data, w.cases, true)
	if err != nil {
		return nil, err
	}
	return func(name string) (caseLook, *compare.Decision) {
		c, ok := w.byName[name]
		switch {
		case !ok:
			return lookOpen, nil
		case c.Axis == "":
			return lookDecided, nil
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
				return lookOpen, nil
			}
			l := lookDecided // the most any comparison of the row asks
			for _, d := range ds {
				l = max(l, w.classify(d))
			}
			return l, nil
		}
		return lookOpen, nil
	}, nil
}

// classify is what a comparison's decision asks of its cases.
func (w *rowWait) classify(d *compare.Decision) caseLook {
	switch {
	case d == nil:
		return lookOpen
	case d.Decided():
		return lookDecided
	case w.over > 0 && d.Err == nil && math.Abs(d.Change.Ratio-1) < w.over:
		return lookSmall
	}
	return lookOpen
}

// why says why a compared case's row is undecided.
func (w *rowWait) why(l caseLook, d *compare.Decision, forks int) string {
	if d == nil || d.Err != nil {
		return fmt.Sprintf("no decision after %d forks (failed forks or no ratio)", forks)
	}
	ch := d.Change
	s := fmt.Sprintf("%+.1f %% [%+.1f, %+.1f] after %d forks", ch.Pct(), (ch.Lo-1)*100, (ch.Hi-1)*100, ch.N)
	if l == lookSmall {
		return s + fmt.Sprintf(": looks under %g %%, not waited for", w.over*100)
	}
	return s + ": still undecided when the budget was spent"
}
