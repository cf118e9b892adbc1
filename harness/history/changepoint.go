package history

import (
	"math"
	"math/rand/v2"
	"sort"
)

// CPDOptions configure change-point detection.
type CPDOptions struct {
	// Alpha is the significance level of each change point's permutation
	// test (default 0.01); Permutations its number of shuffles (199).
	Alpha        float64
	Permutations int
	// MinSize is the fewest points on each side of a change point (4).
	MinSize int
	Seed    uint64
	// MinEffect is how many times the series' own noise a worse shift
	// must move the median before it is a regression (default 3): a
	// change point smaller than that is annotated as small, not alarmed.
	// The noise is the robust standard deviation (1.4826 × the median
	// absolute deviation) of the points around their segment's median.
	MinEffect float64
}

// DefaultMinEffect is CPDOptions.MinEffect's default.
const DefaultMinEffect = 3.0

func (o *CPDOptions) defaults() {
	if o.Alpha == 0 {
		o.Alpha = 0.01
	}
	if o.Permutations == 0 {
		o.Permutations = 199
	}
	if o.MinSize == 0 {
		o.MinSize = 4
	}
	if o.MinEffect == 0 {
		o.MinEffect = DefaultMinEffect
	}
}

// ChangePoints finds where the distribution of xs changes, by E-divisive
// means (Matteson and James 2014, as Apache Otava uses it): the split that
// maximizes the energy distance between the two sides, kept when a
// permutation test finds it significant at Alpha, then each side searched
// again. It returns the indexes that start a new segment, ascending.
func ChangePoints(xs []float64, o CPDOptions) []int {
	o.defaults()
	rng := rand.New(rand.NewPCG(o.Seed, 0x637064)) // "cpd"
	var out []int
	var search func(lo, hi int)
	search = func(lo, hi int) {
		seg := xs[lo:hi]
		if len(seg) < 2*o.MinSize {
			return
		}
		tau, q := bestSplit(seg, o.MinSize)
		if tau < 0 {
			return
		}
		shuffled := append([]float64(nil), seg...)
		exceed := 0
		for p := 0; p < o.Permutations; p++ {
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			if _, qp := bestSplit(shuffled, o.MinSize); qp >= q {
				exceed++
			}
		}
		if pval := float64(exceed+1) / float64(o.Permutations+1); pval >= o.Alpha {
			return
		}
		out = append(out, lo+tau)
		search(lo, lo+tau)
		search(lo+tau, hi)
	}
	search(0, len(xs))
	sort.Ints(out)
	return out
}

// bestSplit returns the split index (the first element of the right side)
// maximizing the scaled energy statistic Q, and that Q; -1 when no split
// leaves MinSize points on each side.
func bestSplit(xs []float64, minSize int) (int, float64) {
	n := len(xs)
	if n < 2*minSize {
		return -1, 0
	}
	// Left = xs[:tau], right = xs[tau:]. Keep the sums of |xi - xj| within
	// the left, within the right and between them as tau moves right.
	var within, between, right float64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			right += math.Abs(xs[i] - xs[j])
		}
	}
	left := within
	best, bestQ := -1, math.Inf(-1)
	for tau := 1; tau < n; tau++ {
		// Move xs[tau-1] from the right side to the left.
		x := xs[tau-1]
		var toLeft, toRight float64
		for i := 0; i < tau-1; i++ {
			toLeft += math.Abs(x - xs[i])
		}
		for j := tau; j < n; j++ {
			toRight += math.Abs(x - xs[j])
		}
		left += toLeft
		right -= toRight
		between += toRight - toLeft
		m, k := float64(tau), float64(n-tau)
		if tau < minSize || n-tau < minSize {
			continue
		}
		e := 2*between/(m*k) - left/(m*(m-1)/2) - right/(k*(k-1)/2)
		if q := m * k / (m + k) * e; q > bestQ {
			best, bestQ = tau, q
		}
	}
	return best, bestQ
}
