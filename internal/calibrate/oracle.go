package calibrate

import (
	"math"

	"gonum.org/v1/gonum/floats"

	"github.com/ledgerbench/ledgerbench/harness/verdict"
)

// The oracle: how many rounds an anytime-valid test told the change
// needs on the same rounds. A test valid whatever the machine's noise
// must not depend on the noise's scale σ, so it sees the rounds' log
// ratios only up to scale; among such tests, the one whose evidence
// grows fastest in expectation against a given standardized change
// δ₁ = μ/σ is the likelihood ratio of the scale-free statistics, the
// Bayes factor with the right-Haar prior 1/σ and the point alternative
// δ₁ (Pérez-Ortiz, Lardy, de Heide and Grünwald, Annals of Statistics
// 2024, on growth-rate optimality; the same statistic is Rushton's
// sequential t test). The oracle is given δ₁ from all the rounds of the
// known change, which no real comparison knows, and tests against no
// change at all where ab's verdict must also clear its margin. Fastest
// growth in expectation is not fewest rounds in every case (a mixture
// over changes can stop sooner on a large one, where three rounds are
// the least either takes), so it is a yardstick for a moderate change,
// not a proven floor, and not a test to use.

// oracleLogBF is the log of that Bayes factor for the log ratios xs,
// against both signs of the change (an equal mixture of +δ₁ and −δ₁, so
// it is two-sided as ab's test is).
func oracleLogBF(xs []float64, d1 float64) float64 {
	n := float64(len(xs))
	var s1, s2 float64
	for _, x := range xs {
		s1 += x
		s2 += x * x
	}
	l0 := logScaleMarginal(n, s1, s2, 0)
	return floats.LogSumExp([]float64{logScaleMarginal(n, s1, s2, d1) - l0, logScaleMarginal(n, s1, s2, -d1) - l0}) - math.Ln2
}

// logScaleMarginal is, up to a constant that does not depend on d, the
// log of ∫ σ⁻ⁿ exp(−Σ(xᵢ − dσ)²/2σ²) dσ/σ: the likelihood of n log ratios
// whose sum is s1 and sum of squares s2 under a standardized mean d, with
// the scale integrated out under 1/σ. The integral is taken over
// u = log σ on a grid wide enough for its mass.
func logScaleMarginal(n, s1, s2, d float64) float64 {
	if s2 == 0 {
		return 0 // no scale to integrate: every d alike
	}
	const steps, width = 1600, 10.0
	mid := 0.5 * math.Log(s2/n)
	vals := make([]float64, steps)
	for k := range vals {
		u := mid - width + 2*width*float64(k)/steps
		inv := math.Exp(-u)
		vals[k] = -n*u - 0.5*(s2*inv*inv-2*d*s1*inv+n*d*d)
	}
	return floats.LogSumExp(vals)
}

// OracleRounds is the mean rounds the oracle took on the rounds of a
// known change (c.Change ≠ 0), replayed in order as SequentialRounds
// replays them: each comparison looks after its first rounds and every
// round from then on, and stops when the oracle's Bayes factor reaches
// 1/alpha or at capRounds. The oracle is tuned in hindsight: δ₁ is the
// change over the rounds' robust spread, times whichever of 0.5, 0.71,
// 1, 1.41 and 2 took fewest rounds. 0 when no comparison fit.
func OracleRounds(c Case, first, capRounds int, alpha float64) float64 {
	d := pairLogRatios(c.A, c.B)
	sd := verdict.RobustSD(d)
	if sd <= 0 || len(d) < first {
		return 0
	}
	best := 0.0
	for _, f := range []float64{0.5, 0.71, 1, 1.41, 2} {
		if m := oracleReplay(d, f*math.Log1p(c.Change)/sd, first, capRounds, alpha); m > 0 && (best == 0 || m < best) {
			best = m
		}
	}
	return best
}

// oracleReplay is OracleRounds' replay of the log ratios d at one δ₁.
func oracleReplay(d []float64, d1 float64, first, capRounds int, alpha float64) float64 {
	threshold := math.Log(1 / alpha)
	total, comparisons := 0, 0
	for pos := 0; pos+first <= len(d); {
		k, ended := first, false
		for ; pos+k <= len(d); k++ {
			if k == capRounds || oracleLogBF(d[pos:pos+k], d1) >= threshold {
				ended = true
				break
			}
		}
		if !ended {
			break // the rounds ran out before the comparison ended
		}
		total += k
		comparisons++
		pos += k
	}
	if comparisons == 0 {
		return 0
	}
	return float64(total) / float64(comparisons)
}

// pairLogRatios is each round's log ratio of its forks' medians, B over
// A: the rounds PairSpread measures the spread of.
func pairLogRatios(a, b Forks) []float64 {
	ma, mb := medians(a), medians(b)
	var d []float64
	for i := range min(len(ma), len(mb)) {
		if ma[i] > 0 && mb[i] > 0 {
			d = append(d, math.Log(mb[i]/ma[i]))
		}
	}
	return d
}
