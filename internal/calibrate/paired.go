package calibrate

import (
	"math"

	"github.com/aclements/go-moremath/stats"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"

	"github.com/ledgerbench/ledgerbench/internal/verdict"
)

// Paired is what comparisons of a fixed number of rounds found, each
// round one fork a side, compared by pairs as ab compares them.
type Paired struct {
	Rounds int // rounds (pairs) per comparison
	// Hits counts the comparisons the paired test rejected at α (for a
	// known change, only those that found it in its direction); Unpaired
	// the same comparisons by the fork-level Mann-Whitney U test, which
	// ignores the rounds.
	Hits, Unpaired Rate
	// Width is the mean width of the interval of the change (Hi - Lo of
	// the ratio: 0.02 is ±1 %), and MDE the mean smallest change detectable
	// at 80 % power, of the paired comparisons.
	Width, MDE float64
	// UnpairedWidth is the mean width of the unpaired (Welch) interval on
	// the same data.
	UnpairedWidth float64
	// Change is the geometric mean of the comparisons' ratios.
	Change float64
}

// PairedRounds splits the rounds of a and b (fork i of each side ran in
// round i) into comparisons of rounds rounds and compares each by its
// pairs at alpha. dir is the direction of a known change (+1: b is
// slower, a larger score; -1: faster), or 0 for an A/A, where any
// rejection is a false positive.
func PairedRounds(a, b Forks, rounds int, alpha float64, dir int) Paired {
	res := Paired{Rounds: rounds}
	ma, mb := medians(a), medians(b)
	n := min(len(ma), len(mb)) / rounds
	var hits, uhits int
	var width, uwidth, mde, logs float64
	for i := range n {
		x, y := ma[i*rounds:(i+1)*rounds], mb[i*rounds:(i+1)*rounds]
		c, err := verdict.Paired(x, y, alpha, 0.8)
		if err != nil {
			continue
		}
		if found(c, alpha, dir) {
			hits++
		}
		if p(x, y) < alpha && (dir == 0 || (dir > 0) == (stats.Mean(y) > stats.Mean(x))) {
			uhits++
		}
		width += c.Hi - c.Lo
		mde += c.MDE
		logs += math.Log(c.Ratio)
		if u, err := verdict.Unpaired(x, y, alpha, 0.8); err == nil {
			uwidth += u.Hi - u.Lo
		}
	}
	res.Hits, res.Unpaired = rate(hits, n), rate(uhits, n)
	if n > 0 {
		res.Width, res.UnpairedWidth, res.MDE = width/float64(n), uwidth/float64(n), mde/float64(n)
		res.Change = math.Exp(logs / float64(n))
	}
	return res
}

// found reports whether c rejects no change at alpha, in direction dir
// (any, when 0).
func found(c verdict.Change, alpha float64, dir int) bool {
	return c.P < alpha && (dir == 0 || (dir > 0) == (c.Ratio > 1))
}

// PairSpread is the robust standard deviation (1.4826 MAD) of the log
// ratios of the rounds' fork medians: the noise of one pair, as the
// verdicts' detectable change and ab's plan use it.
func PairSpread(a, b Forks) float64 {
	ma, mb := medians(a), medians(b)
	var d []float64
	for i := range min(len(ma), len(mb)) {
		if ma[i] > 0 && mb[i] > 0 {
			d = append(d, math.Log(mb[i]/ma[i]))
		}
	}
	return verdict.RobustSD(d)
}

// Suite counts, over comparisons of rounds rounds of every case of an
// A/A suite (cases[j] holds case j's two sides), how often the suite as
// a whole looked changed: PerRow when any case's paired test rejects at
// alpha on its own, FDR when any survives the Benjamini–Hochberg
// procedure at alpha across the cases, as ab decides its exit status.
func Suite(cases [][2]Forks, rounds int, alpha float64) (perRow, fdr Rate) {
	if len(cases) == 0 {
		return rate(0, 0), rate(0, 0)
	}
	n := -1
	meds := make([][2][]float64, len(cases))
	for j, c := range cases {
		meds[j] = [2][]float64{medians(c[0]), medians(c[1])}
		if m := min(len(meds[j][0]), len(meds[j][1])) / rounds; n < 0 || m < n {
			n = m
		}
	}
	var rowHits, fdrHits int
	for i := range n {
		ps := make([]float64, len(cases))
		any := false
		for j := range cases {
			ps[j] = math.NaN()
			x, y := meds[j][0][i*rounds:(i+1)*rounds], meds[j][1][i*rounds:(i+1)*rounds]
			if c, err := verdict.Paired(x, y, alpha, 0.8); err == nil {
				ps[j] = c.P
				any = any || c.P < alpha
			}
		}
		if any {
			rowHits++
		}
		_, rejected := verdict.BH(ps, alpha)
		for _, r := range rejected {
			if r {
				fdrHits++
				break
			}
		}
	}
	return rate(rowHits, n), rate(fdrHits, n)
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
