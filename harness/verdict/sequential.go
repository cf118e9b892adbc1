package verdict

import (
	"math"
	"sync"

	"github.com/aclements/go-moremath/stats"
	"gonum.org/v1/gonum/stat/distuv"
)

// The anytime-valid test: a Bayes factor of the t-test whose prior on the
// standard deviation is the right-Haar measure 1/σ (on both hypotheses)
// and whose prior on the standardized change δ = μ/σ is a mixture of
// normals N(0, g) over mixtureG. Because of the Haar prior the factor
// depends on the data only through the t statistic, and, as a
// likelihood ratio of the scale-invariant statistics, it is a test
// martingale under the null hypothesis of normal log ratios with mean 0
// and any σ: it may be looked at after every round and the comparison
// stopped whenever, and by Ville's inequality it ever reaches 1/α with
// probability at most α. See Pérez-Ortiz, Lardy, de Heide and Grünwald,
// "E-statistics, group invariance and anytime-valid testing" (Annals of
// Statistics, 2024), and Grünwald, de Heide and Koolen, "Safe testing"
// (JRSS-B, 2024); the fixed-g factor is Rouder et al.'s (Psychonomic
// Bulletin & Review, 2009) before their integral over g.
//
// The grid of g covers the standardized changes benchmarks show: a
// +2 % change at a round's spread of 2 % is δ ≈ 1, a −50 % change at
// 1 % is δ ≈ 70. A mixture of test martingales with fixed weights is
// one.
var mixtureG = []float64{1, 10, 100, 1e3, 1e4}

// logBF is the log of the mixture Bayes factor of a t statistic with
// t2 = t², nu degrees of freedom and effective sample size n (the pairs,
// or n₁n₂/(n₁+n₂) for two samples).
func logBF(t2, nu, n float64) float64 {
	terms := make([]float64, len(mixtureG))
	for i, g := range mixtureG {
		a := 1 + n*g
		if math.IsInf(t2, 1) {
			terms[i] = nu / 2 * math.Log(a)
			continue
		}
		terms[i] = -0.5*math.Log(a) + (nu+1)/2*(math.Log1p(t2/nu)-math.Log1p(t2/(nu*a)))
	}
	return logMeanExp(terms)
}

func logMeanExp(xs []float64) float64 {
	top := math.Inf(-1)
	for _, x := range xs {
		top = math.Max(top, x)
	}
	var s float64
	for _, x := range xs {
		s += math.Exp(x - top)
	}
	return top + math.Log(s/float64(len(xs)))
}

// criticalT2 is the t² at which the Bayes factor with nu degrees of
// freedom and effective size n reaches 1/alpha: the confidence sequence's
// half width is √criticalT2 standard errors. The factor grows with t², so
// it is found by bisection; +Inf when not even an infinite t reaches it
// (too few samples for alpha).
func criticalT2(nu, n, alpha float64) float64 {
	key := [3]float64{nu, n, alpha}
	if v, ok := criticalCache.Load(key); ok {
		return v.(float64)
	}
	v := findCriticalT2(nu, n, alpha)
	criticalCache.Store(key, v)
	return v
}

// criticalCache holds criticalT2 by (ν, n, α): a comparison looked at
// every round asks for the same few again and again.
var criticalCache sync.Map

func findCriticalT2(nu, n, alpha float64) float64 {
	target := math.Log(1 / alpha)
	if logBF(math.Inf(1), nu, n) < target {
		return math.Inf(1)
	}
	lo, hi := 0.0, 1.0
	for logBF(hi, nu, n) < target {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if logBF(mid, nu, n) < target {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-9*hi {
			break
		}
	}
	return hi
}

// SequentialTest names the anytime-valid test in Change.Test.
const SequentialTest = "anytime t"

// PairedSequential is the anytime-valid comparison of paired samples: the
// change is the geometric mean of the pairs' ratios, E the e-value of no
// change after these pairs (the Bayes factor above: a test martingale
// over the pairs, so the comparison may stop at any pair), P = min(1,
// 1/E), and Lo, Hi the confidence sequence at 1-alpha: the changes whose
// own e-value stays below 1/alpha, an interval that holds at every
// number of pairs at once with probability 1-alpha. MDE is the change
// the sequence would show at the given power at this spread and n.
func PairedSequential(a, b []float64, alpha, power float64) (Change, error) {
	d, err := logRatios(a, b)
	if err != nil {
		return Change{}, err
	}
	s := stats.Sample{Xs: d}
	n := len(d)
	c := Change{Paired: true, N: n, Ratio: math.Exp(s.Mean()), Test: SequentialTest, Sequential: true}
	sd := 0.0
	if n >= 2 {
		sd = s.StdDev()
	}
	c.Spread = sd
	c.sequential(s.Mean(), sd/math.Sqrt(float64(n)), float64(n-1), float64(n), alpha, power)
	return c, nil
}

// UnpairedSequential is PairedSequential's counterpart for independent
// samples: the two-sample t-test's Bayes factor (pooled variance, ν =
// n₁+n₂−2, effective size n₁n₂/(n₁+n₂)), under the null hypothesis of
// normal log values with one mean and one σ on both sides.
func UnpairedSequential(a, b []float64, alpha, power float64) (Change, error) {
	la, lb, err := logSides(a, b)
	if err != nil {
		return Change{}, err
	}
	sa, sb := stats.Sample{Xs: la}, stats.Sample{Xs: lb}
	na, nb := float64(len(a)), float64(len(b))
	diff := sb.Mean() - sa.Mean()
	c := Change{N: min(len(a), len(b)), Ratio: math.Exp(diff), Test: SequentialTest, Sequential: true}
	nu := na + nb - 2
	var pooled float64
	if nu > 0 {
		var ss float64
		if na > 1 {
			ss += sa.Variance() * (na - 1)
		}
		if nb > 1 {
			ss += sb.Variance() * (nb - 1)
		}
		pooled = math.Sqrt(ss / nu)
	}
	c.Spread = pooled * math.Sqrt2
	c.sequential(diff, pooled*math.Sqrt(1/na+1/nb), nu, na*nb/(na+nb), alpha, power)
	return c, nil
}

// sequential sets the e-value, p-value, confidence sequence and MDE of a
// log change mean with standard error se, nu degrees of freedom and
// effective size n. Below MinSamples a side (or pairs) nothing is
// decided: E is 1 and the interval unbounded.
func (c *Change) sequential(mean, se, nu, n, alpha, power float64) {
	c.E, c.P, c.Lo, c.Hi, c.MDE = 1, 1, 0, math.Inf(1), math.Inf(1)
	if c.N < MinSamples || nu < 1 {
		return
	}
	if se == 0 {
		// Exact: no spread at all. The t statistic is infinite unless
		// nothing changed.
		c.Lo, c.Hi, c.MDE = c.Ratio, c.Ratio, 0
		if mean != 0 {
			c.E = math.Exp(logBF(math.Inf(1), nu, n))
			c.P = math.Min(1, 1/c.E)
		}
		return
	}
	t := mean / se
	c.E = math.Exp(logBF(t*t, nu, n))
	c.P = math.Min(1, 1/c.E)
	crit := math.Sqrt(criticalT2(nu, n, alpha))
	if math.IsInf(crit, 1) {
		return
	}
	c.Lo, c.Hi = math.Exp(mean-crit*se), math.Exp(mean+crit*se)
	c.MDE = sequentialMDE(crit, se, nu, power)
}

// sequentialMDE is the change whose log is (t* + t(power)) standard
// errors: the sequence excludes no change with about that power.
func sequentialMDE(crit, se, nu, power float64) float64 {
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nu}.Quantile(power)
	return math.Exp((crit+q)*se) - 1
}

// SequentialMDE is PairedMDE for the anytime-valid test: the smallest
// relative change its confidence sequence excludes no change for, with
// the given power, after n pairs whose log ratio has standard deviation
// spread. +Inf below MinSamples pairs.
func SequentialMDE(spread float64, n int, alpha, power float64) float64 {
	if n < MinSamples {
		return math.Inf(1)
	}
	crit := math.Sqrt(criticalT2(float64(n-1), float64(n), alpha))
	if math.IsInf(crit, 1) {
		return crit
	}
	return sequentialMDE(crit, spread/math.Sqrt(float64(n)), float64(n-1), power)
}

// SequentialPairs is Pairs for the anytime-valid test: the fewest pairs
// (at least MinSamples) whose SequentialMDE is at most target; 0 when not
// even MaxPairs do (a spread that is not a finite positive number
// included, except 0, which needs MinSamples).
func SequentialPairs(spread, target, alpha, power float64) int {
	if spread == 0 {
		return MinSamples
	}
	if !(spread > 0) || math.IsInf(spread, 1) || !(target > 0) {
		return 0
	}
	if SequentialMDE(spread, MaxPairs, alpha, power) > target {
		return 0
	}
	return fewest(MinSamples, target, func(n int) float64 { return SequentialMDE(spread, n, alpha, power) })
}

// EBH is the e-Benjamini–Hochberg procedure (Wang and Ramdas, "False
// discovery rate control with e-values", JRSS-B 2022) at false-discovery
// rate q over the e-values es: it rejects the k rows of largest e-value
// for the largest k whose k-th largest is at least m/(q·k), m the rows.
// It is the Benjamini–Hochberg procedure applied to 1/e, and keeps the
// false-discovery rate at q whatever the dependence between the rows.
// Adjusted values are the smallest q at which each is rejected; a NaN
// e-value is no test (NaN, never rejected).
func EBH(es []float64, q float64) (adjusted []float64, rejected []bool) {
	ps := make([]float64, len(es))
	for i, e := range es {
		switch {
		case math.IsNaN(e):
			ps[i] = math.NaN()
		case e <= 1:
			ps[i] = 1
		default:
			ps[i] = 1 / e
		}
	}
	return BH(ps, q)
}
