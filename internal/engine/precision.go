package engine

import (
	"fmt"
	"math"
	"time"

	"github.com/aclements/go-moremath/stats"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
)

// PrecisionConfidence is the level of the interval a precision is asked
// of.
const PrecisionConfidence = 0.95

// RelativeHalfWidth is the half width of the Student-t interval at
// PrecisionConfidence of a case's forks' mean scores, relative to their
// mean: each fork is one sample. It is +Inf with fewer than 2 forks.
func RelativeHalfWidth(cr *result.CaseResult) float64 {
	forks := cr.ForkScores()
	if len(forks) < 2 {
		return math.Inf(1)
	}
	means := make([]float64, 0, len(forks))
	for _, f := range forks {
		means = append(means, stats.Mean(f))
	}
	mean, half := verdict.MeanInterval(means, PrecisionConfidence)
	if mean == 0 || math.IsNaN(half) {
		return math.Inf(1)
	}
	return math.Abs(half / mean)
}

// Precise reports whether case i has reached o.Precision on every side,
// or, in an A/B run, whether the interval of its change (by pairs of
// rounds) is within ±o.Precision and its detectable change at most
// o.Detect. Neither depends on the change itself, only on how much the
// pairs spread. With Detect the detectable change is the anytime-valid
// test's, whose verdicts hold α whenever the rounds stop.
func Precise(o Options, runs []*result.Run, i int) bool {
	if len(runs) == 2 {
		c, err := PairedChange(runs[0].Cases[i], runs[1].Cases[i], o.Detect > 0)
		switch {
		case err != nil:
			return false
		case o.Detect > 0 && !(c.MDE <= o.Detect):
			return false
		case o.Precision > 0 && !(HalfWidth(c) <= o.Precision):
			return false
		}
		return true
	}
	for _, r := range runs {
		if RelativeHalfWidth(r.Cases[i]) > o.Precision {
			return false
		}
	}
	return true
}

// PairedChange is the change of side b's case against side a's, by the
// pairs of its rounds (fork n of both sides ran in round n), at
// PrecisionConfidence, with the detectable change at 80 % power: by the
// anytime-valid test when sequential, else by the fixed-n one.
func PairedChange(a, b *result.CaseResult, sequential bool) (verdict.Change, error) {
	x, y := roundMedians(a), roundMedians(b)
	var xs, ys []float64
	for fork, v := range x {
		if w, ok := y[fork]; ok {
			xs, ys = append(xs, v), append(ys, w)
		}
	}
	if len(xs) < 2 {
		return verdict.Change{}, fmt.Errorf("%d pairs: no interval", len(xs))
	}
	if sequential {
		return verdict.PairedSequential(xs, ys, 1-PrecisionConfidence, 0.8)
	}
	return verdict.Paired(xs, ys, 1-PrecisionConfidence, 0.8)
}

// HalfWidth is the half width of c's interval on the log scale: about
// the relative half width.
func HalfWidth(c verdict.Change) float64 {
	return (math.Log(c.Hi) - math.Log(c.Lo)) / 2
}

// roundMedians are a case's forks' medians by fork number.
func roundMedians(cr *result.CaseResult) map[int]float64 {
	byFork := cr.ScoresByFork()
	out := make(map[int]float64, len(byFork))
	for f, xs := range byFork {
		out[f] = verdict.Median(xs)
	}
	return out
}

// PlanError is the refusal of a plan: after the first rounds, a case
// needs more rounds to reach Options.Detect than the budget leaves.
type PlanError struct {
	Case        string
	Rounds      int           // the rounds the case needs in all (0: more than verdict.MaxPairs)
	Need, Left  time.Duration // the time they would take, and what the budget leaves
	Spread      float64       // of one round's log ratio
	Detect      float64
	RoundsSoFar int
}

func (e *PlanError) Error() string {
	need := fmt.Sprintf("%d rounds (about %s more)", e.Rounds, e.Need.Round(time.Second))
	if e.Rounds == 0 {
		need = fmt.Sprintf("more than %d rounds", verdict.MaxPairs)
	}
	return fmt.Sprintf("%s cannot reach a detectable change of %g %% within the budget: one round's ratio spreads %.2f %% after %d rounds, so it needs %s, and %s are left",
		e.Case, 100*e.Detect, 100*e.Spread, e.RoundsSoFar, need, e.Left.Round(time.Second))
}

// plan checks, after the first rounds of an A/B run with o.Detect, that
// every case can reach it within what is left of the budget, at the
// time a round of it has taken so far. It returns the first case that
// cannot, as a *PlanError.
func plan(o Options, cases []Case, runs []*result.Run, rounds int, elapsed time.Duration) error {
	if o.Detect == 0 || len(runs) != 2 || o.Anyway {
		return nil
	}
	perCase := elapsed / time.Duration(rounds*len(cases)) // one round of one case
	var need time.Duration
	var worst *PlanError
	for i := range cases {
		c, err := PairedChange(runs[0].Cases[i], runs[1].Cases[i], true)
		if err != nil {
			continue // failed forks: reported, and given no more rounds
		}
		n := verdict.SequentialPairs(c.Spread, o.Detect, 1-PrecisionConfidence, 0.8)
		e := &PlanError{Case: cases[i].Name(), Rounds: n, Spread: c.Spread, Detect: o.Detect, RoundsSoFar: rounds}
		if n == 0 {
			worst = e
			break
		}
		if more := n - rounds; more > 0 {
			e.Need = time.Duration(more) * perCase
			need += e.Need
			if worst == nil || e.Need > worst.Need {
				worst = e
			}
		}
	}
	left := o.Budget - elapsed
	if worst != nil && (worst.Rounds == 0 || worst.Rounds > MaxForks || need > left) {
		worst.Need, worst.Left = need, max(left, 0)
		return worst
	}
	return nil
}
