package verdict

import (
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/aclements/go-moremath/stats"
	"gonum.org/v1/gonum/stat/distuv"
)

// Rank tests are robust to the rare disturbed round a shared host gives
// (one fork 20 % off among dozens within 1 %), which widens a t interval
// for every comparison that holds it. They cannot reach a small α with a
// few samples, though: with n pairs the signed-rank test's smallest
// two-sided p-value is 2^(1-n) (0.0625 at 5 pairs), and the Mann-Whitney
// test's 2/C(n+m, n) (0.1 at 3 forks a side). Below that the comparison
// falls back to the t-test of the log values, chosen by the number of
// samples alone, never by what they say.

// rankPairs is the fewest pairs with which the signed-rank test can reach
// alpha.
func rankPairs(alpha float64) int {
	n := 1
	for math.Pow(2, float64(1-n)) > alpha && n < 64 {
		n++
	}
	return n
}

// rankSamples is the fewest samples a side with which the Mann-Whitney
// test can reach alpha (equal sides).
func rankSamples(alpha float64) int {
	n := 1
	for 2/binomial(2*n, n) > alpha && n < 64 {
		n++
	}
	return n
}

func binomial(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// signedRank is the Wilcoxon signed-rank test of the log ratios d against
// no change, with the Hodges–Lehmann estimate (the median of the Walsh
// averages) and its distribution-free interval at confidence 1-alpha. The
// p-value is exact (zero differences dropped) when no two |d| tie and
// there are at most 60; otherwise the normal approximation with the tie
// and continuity corrections.
func signedRank(d []float64, alpha float64) (p, est, lo, hi float64) {
	var nz []float64
	for _, x := range d {
		if x != 0 {
			nz = append(nz, x)
		}
	}
	walsh := make([]float64, 0, len(d)*(len(d)+1)/2)
	for i := range d {
		for j := i; j < len(d); j++ {
			walsh = append(walsh, (d[i]+d[j])/2)
		}
	}
	sort.Float64s(walsh)
	est = stats.Sample{Xs: walsh, Sorted: true}.Quantile(0.5)
	n := len(nz)
	if n == 0 {
		return 1, est, est, est
	}
	abs := make([]float64, n)
	for i, x := range nz {
		abs[i] = math.Abs(x)
	}
	ranks, ties := rankOf(abs)
	var wPlus float64
	for i, x := range nz {
		if x > 0 {
			wPlus += ranks[i]
		}
	}
	total := float64(n*(n+1)) / 2
	if !ties && n <= 60 {
		cdf := signedRankCDF(n)
		lower := cdf[int(math.Min(wPlus, total-wPlus))]
		p = math.Min(1, 2*lower)
	} else {
		mean := total / 2
		v := float64(n*(n+1)*(2*n+1)) / 24
		for _, t := range tieCounts(abs) {
			v -= float64(t*t*t-t) / 48
		}
		z := (math.Abs(wPlus-mean) - 0.5) / math.Sqrt(v)
		p = math.Min(1, 2*distuv.UnitNormal.Survival(math.Max(z, 0)))
	}
	// The interval: the k-th smallest and largest Walsh averages of all
	// len(d) differences, k from the signed-rank distribution of n =
	// len(d) at alpha/2.
	k := signedRankCritical(len(d), alpha/2)
	if k < 1 {
		return p, est, math.Inf(-1), math.Inf(1)
	}
	return p, est, walsh[k-1], walsh[len(walsh)-k]
}

// signedRankCDF is P(W+ ≤ w) for w = 0 … n(n+1)/2 under no change: the
// count of subsets of {1 … n} whose ranks sum to w, over 2^n.
func signedRankCDF(n int) []float64 {
	total := n * (n + 1) / 2
	counts := make([]float64, total+1)
	counts[0] = 1
	for r := 1; r <= n; r++ {
		for w := total; w >= r; w-- {
			counts[w] += counts[w-r]
		}
	}
	scale := math.Pow(2, -float64(n))
	cdf := make([]float64, total+1)
	acc := 0.0
	for w, c := range counts {
		acc += c
		cdf[w] = acc * scale
	}
	return cdf
}

// signedRankCritical is the largest k with P(W+ ≤ k-1) ≤ q: the rank of
// the Walsh average that bounds an interval at two-sided 2q (0 when none
// does). Beyond 60 pairs it uses the normal approximation.
func signedRankCritical(n int, q float64) int {
	return cachedCritical([4]float64{2, float64(n), 0, q}, func() int { return signedRankCriticalOf(n, q) })
}

func signedRankCriticalOf(n int, q float64) int {
	if n <= 60 {
		cdf := signedRankCDF(n)
		k := 0
		for k < len(cdf) && cdf[k] <= q {
			k++
		}
		return k
	}
	mean := float64(n*(n+1)) / 4
	sd := math.Sqrt(float64(n*(n+1)*(2*n+1)) / 24)
	return int(math.Floor(mean + distuv.UnitNormal.Quantile(q)*sd + 0.5))
}

// rankSum is the Mann-Whitney U test of log values la against lb (from
// go-moremath, exact for small samples), with the Hodges–Lehmann estimate
// of lb's shift (the median of all differences) and its distribution-free
// interval at confidence 1-alpha.
func rankSum(la, lb []float64, alpha float64) (p, est, lo, hi float64, err error) {
	diffs := make([]float64, 0, len(la)*len(lb))
	for _, x := range la {
		for _, y := range lb {
			diffs = append(diffs, y-x)
		}
	}
	sort.Float64s(diffs)
	est = stats.Sample{Xs: diffs, Sorted: true}.Quantile(0.5)
	res, err := stats.MannWhitneyUTest(la, lb, stats.LocationDiffers)
	if err == stats.ErrSamplesEqual {
		return 1, est, est, est, nil
	}
	if err != nil {
		return 0, 0, 0, 0, err
	}
	k := rankSumCritical(len(la), len(lb), alpha/2)
	if k < 1 {
		return res.P, est, math.Inf(-1), math.Inf(1), nil
	}
	return res.P, est, diffs[k-1], diffs[len(diffs)-k], nil
}

// criticals caches the critical values of the rank tests, which the
// exact distributions make costly: by test, sizes and level.
var criticals struct {
	sync.Mutex
	m map[[4]float64]int
}

func cachedCritical(key [4]float64, f func() int) int {
	criticals.Lock()
	defer criticals.Unlock()
	if k, ok := criticals.m[key]; ok {
		return k
	}
	if criticals.m == nil {
		criticals.m = map[[4]float64]int{}
	}
	k := f()
	criticals.m[key] = k
	return k
}

// rankSumCritical is the largest k with P(U ≤ k-1) ≤ q for samples of n1
// and n2 (no ties): the rank of the difference that bounds an interval at
// two-sided 2q (0 when none does). The exact distribution (go-moremath's
// UDist) serves up to 400 pairs of values, the normal approximation
// beyond.
func rankSumCritical(n1, n2 int, q float64) int {
	return cachedCritical([4]float64{1, float64(n1), float64(n2), q}, func() int {
		if n1*n2 > 400 {
			mean := float64(n1*n2) / 2
			sd := math.Sqrt(float64(n1*n2*(n1+n2+1)) / 12)
			return max(0, int(math.Floor(mean+distuv.UnitNormal.Quantile(q)*sd+0.5)))
		}
		dist := stats.UDist{N1: n1, N2: n2}
		k := 0
		for k < n1*n2 && dist.CDF(float64(k)) <= q {
			k++
		}
		return k
	})
}

// rankOf ranks xs from 1, ties getting their mean rank, and reports
// whether any tie.
func rankOf(xs []float64) ([]float64, bool) {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	ranks := make([]float64, len(xs))
	ties := false
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && xs[idx[j+1]] == xs[idx[i]] {
			j++
		}
		if j > i {
			ties = true
		}
		for k := i; k <= j; k++ {
			ranks[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return ranks, ties
}

// tieCounts are the sizes of the groups of equal values in xs.
func tieCounts(xs []float64) []int {
	s := slices.Sorted(slices.Values(xs))
	var out []int
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[i] {
			j++
		}
		if j > i {
			out = append(out, j-i+1)
		}
		i = j + 1
	}
	return out
}

// RobustSD is 1.4826 times the median absolute deviation of xs from
// their median: the standard deviation of normal data, unmoved by a few
// outliers.
func RobustSD(xs []float64) float64 {
	s := stats.Sample{Xs: slices.Sorted(slices.Values(xs)), Sorted: true}
	m := s.Quantile(0.5)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - m)
	}
	return 1.4826 * stats.Sample{Xs: slices.Sorted(slices.Values(dev)), Sorted: true}.Quantile(0.5)
}
