package engine

import (
	"math"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"

	"github.com/ledgerbench/ledgerbench/harness/result"
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
	sum := benchmath.AssumeNormal.Summary(benchmath.NewSample(means, &benchmath.DefaultThresholds), PrecisionConfidence)
	if sum.Center == 0 || math.IsNaN(sum.Hi) {
		return math.Inf(1)
	}
	return math.Abs((sum.Hi - sum.Lo) / 2 / sum.Center)
}

// Precise reports whether case i has reached o.Precision on every side.
func Precise(o Options, runs []*result.Run, i int) bool {
	for _, r := range runs {
		if RelativeHalfWidth(r.Cases[i]) > o.Precision {
			return false
		}
	}
	return true
}
