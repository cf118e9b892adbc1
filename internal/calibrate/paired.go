package calibrate

import (
	"math"

	"github.com/aclements/go-moremath/stats"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
)

// Paired is what comparisons of a fixed number of rounds found, each
// round one fork a side, each comparison decided as ab decides a row
// ([Decide]).
type Paired struct {
	Rounds int // rounds (pairs) per comparison
	// Hits counts the comparisons ab's verdict called changed (for a
	// known change, only those in its direction): the answer a user
	// gets. Rejected counts those whose test rejected no change at α,
	// whatever the margin. Unpaired counts the same comparisons by the
	// fork-level Mann-Whitney U test, which ignores the rounds (a
	// reference, not what ab does).
	Hits, Rejected, Unpaired Rate
	// Width is the mean width of the interval of the change (Hi - Lo of
	// the ratio: 0.02 is ±1 %), and MDE the mean smallest change
	// detectable at 80 % power, of ab's comparisons.
	Width, MDE float64
	// UnpairedWidth is the mean width of the unpaired (Welch) interval on
	// the same data.
	UnpairedWidth float64
	// Change is the geometric mean of the comparisons' ratios.
	Change float64
}

// PairedRounds splits the rounds of a and b (fork i of each side ran in
// round i) into comparisons of rounds rounds and decides each as ab
// decides a row, under o (compare.ABOptions). dir is the direction of a
// known change (+1: b is slower, a larger score; -1: faster), or 0 for
// an A/A, where any change found is a false positive.
func PairedRounds(a, b Forks, rounds int, o compare.Options, dir int) Paired {
	res := Paired{Rounds: rounds}
	n := min(len(a), len(b)) / rounds
	var hits, rejected, uhits int
	var width, uwidth, mde, logs float64
	for i := range n {
		lo, hi := i*rounds, (i+1)*rounds
		d := decideOne(a, b, lo, hi, o)
		if d == nil || d.Err != nil {
			continue
		}
		c := d.Change
		if found(d, dir) {
			hits++
		}
		if d.Rejected && inDirection(c, dir) {
			rejected++
		}
		x, y := medians(a[lo:hi]), medians(b[lo:hi])
		if p(x, y) < o.Alpha && (dir == 0 || (dir > 0) == (stats.Mean(y) > stats.Mean(x))) {
			uhits++
		}
		width += c.Hi - c.Lo
		mde += c.MDE
		logs += math.Log(c.Ratio)
		if u, err := verdict.Unpaired(x, y, o.Alpha, compare.Power); err == nil {
			uwidth += u.Hi - u.Lo
		}
	}
	res.Hits, res.Rejected, res.Unpaired = rate(hits, n), rate(rejected, n), rate(uhits, n)
	if n > 0 {
		res.Width, res.UnpairedWidth, res.MDE = width/float64(n), uwidth/float64(n), mde/float64(n)
		res.Change = math.Exp(logs / float64(n))
	}
	return res
}

// found reports whether ab's verdict d is changed, in direction dir (any,
// when 0).
func found(d *compare.Decision, dir int) bool {
	return d.Is(verdict.Changed) && inDirection(d.Change, dir)
}

func inDirection(c verdict.Change, dir int) bool {
	return dir == 0 || (dir > 0) == (c.Ratio > 1)
}

// PairSpread is the robust standard deviation (1.4826 MAD) of the log
// ratios of the rounds' fork medians: the noise of one pair, as the
// verdicts' detectable change and ab's plan use it.
func PairSpread(a, b Forks) float64 {
	return verdict.RobustSD(pairLogRatios(a, b))
}

// SuiteRates are how often an A/A of a whole suite looked changed.
type SuiteRates struct {
	// PerRow counts the comparisons in which any case's test rejected
	// no change at α on its own, as if each row were the only one;
	// Changed those in which ab's verdicts (the Benjamini–Hochberg
	// procedure across the rows, then the margin) called any row
	// changed; Exit those in which any row was a change for the worse,
	// what makes ab exit 1.
	PerRow, Changed, Exit Rate
}

// Suite counts, over comparisons of rounds rounds of every case of an
// A/A suite at once, decided as ab decides a suite's rows ([Decide],
// under o), how often the suite as a whole looked changed.
func Suite(cases []Case, rounds int, o compare.Options) SuiteRates {
	if len(cases) == 0 {
		return SuiteRates{rate(0, 0), rate(0, 0), rate(0, 0)}
	}
	n := -1
	for _, c := range cases {
		if m := min(len(c.A), len(c.B)) / rounds; n < 0 || m < n {
			n = m
		}
	}
	var rowHits, changed, exit int
	for i := range n {
		ds, err := Decide(cases, i*rounds, (i+1)*rounds, o)
		if err != nil {
			continue
		}
		var anyRow, anyChanged, anyWorse bool
		for _, d := range ds {
			if d == nil || d.Err != nil {
				continue
			}
			anyRow = anyRow || d.Change.P < o.Alpha
			anyChanged = anyChanged || d.Verdict == verdict.Changed
			anyWorse = anyWorse || (d.Verdict == verdict.Changed && d.Worse)
		}
		if anyRow {
			rowHits++
		}
		if anyChanged {
			changed++
		}
		if anyWorse {
			exit++
		}
	}
	return SuiteRates{rate(rowHits, n), rate(changed, n), rate(exit, n)}
}

// Shared is how much of their iterations' noise the two sides of the
// rounds have in common.
type Shared struct {
	// Corr is the correlation of the two sides' iterations within a
	// round: the log of each iteration's score less its fork's mean log,
	// paired by iteration index. In a duet the iterations run at the
	// same instants, and when both sides spread alike, Corr is the share
	// of the variance of an iteration's ratio that running at once
	// removes (Var = 2v(1-Corr)); rounds whose sides run one after the
	// other share none of the noise within a fork, and Corr is near 0.
	// With no spread on a side, Corr is 0.
	Corr float64
	// SpreadA and SpreadB are each side's standard deviation of an
	// iteration's log score around its fork's mean.
	SpreadA, SpreadB float64
	// N counts the pairs of iterations; under MinSharedPairs, the
	// other fields are 0.
	N int
}

// MinSharedPairs is the fewest pairs of iterations SharedNoise measures.
const MinSharedPairs = 3

// SharedNoise measures Shared on the rounds of a and b (round i is fork
// i of both). A round with a score that is not positive, or of one
// iteration, is left out.
func SharedNoise(a, b Forks) Shared {
	var x, y []float64
	forks := 0
	for i := range min(len(a), len(b)) {
		n := min(len(a[i]), len(b[i]))
		if n < 2 {
			continue
		}
		dx, okx := logDeviations(a[i][:n])
		dy, oky := logDeviations(b[i][:n])
		if !okx || !oky {
			continue
		}
		x, y = append(x, dx...), append(y, dy...)
		forks++
	}
	s := Shared{N: len(x)}
	if len(x) < MinSharedPairs {
		return s
	}
	df := float64(len(x) - forks) // a fork's mean takes one degree of freedom
	s.SpreadA = math.Sqrt(floats.Dot(x, x) / df)
	s.SpreadB = math.Sqrt(floats.Dot(y, y) / df)
	if s.SpreadA > 0 && s.SpreadB > 0 { // else no noise to share: Corr 0
		s.Corr = stat.Correlation(x, y, nil)
	}
	return s
}

// logDeviations are the logs of vs less their mean; ok is false when a
// value is not positive.
func logDeviations(vs []float64) (d []float64, ok bool) {
	d = make([]float64, len(vs))
	for i, v := range vs {
		if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, false
		}
		d[i] = math.Log(v)
	}
	floats.AddConst(-stat.Mean(d, nil), d)
	return d, true
}
