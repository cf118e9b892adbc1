package verdict

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Verdict is the three-way answer of one comparison.
type Verdict int

const (
	// Unknown: neither a change nor its absence is shown; more samples
	// would decide.
	Unknown Verdict = iota
	// Same: the whole interval of the change lies inside ±margin.
	Same
	// Changed: the test rejects no change and the estimate is at least
	// the margin away from it.
	Changed
)

func (v Verdict) String() string {
	switch v {
	case Same:
		return "same"
	case Changed:
		return "changed"
	}
	return "unknown"
}

// Verdict decides c with margin, the smallest change that matters (0.01:
// 1 %), given whether its test rejected no change: by its own p-value at
// α, or by a procedure across rows such as [BH]. With a margin of 0 no
// comparison is Same.
func (c Change) Verdict(margin float64, rejected bool) Verdict {
	switch {
	case rejected && math.Abs(c.Ratio-1) >= margin:
		return Changed
	case margin > 0 && c.Lo >= 1-margin && c.Hi <= 1+margin:
		return Same
	}
	return Unknown
}

// MaxPairs bounds the search of [Pairs].
const MaxPairs = 100_000

// Pairs is how many pairs a paired comparison needs to detect a change of
// target (0.02: 2 %) at alpha with the given power, when one pair's log
// ratio has standard deviation spread: the smallest n ≥ 2 whose MDE is at
// most target. It returns 0 when not even MaxPairs do (a spread that is
// not a finite positive number included, except 0, which needs 2).
func Pairs(spread, target, alpha, power float64) int {
	if spread == 0 {
		return 2
	}
	if !(spread > 0) || math.IsInf(spread, 1) || !(target > 0) {
		return 0
	}
	goal := math.Log1p(target)
	mde := func(n int) float64 {
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}
		return (t.Quantile(1-alpha/2) + t.Quantile(power)) * spread / math.Sqrt(float64(n))
	}
	if mde(MaxPairs) > goal {
		return 0
	}
	lo, hi := 2, MaxPairs // mde(hi) ≤ goal; mde falls with n
	if mde(lo) <= goal {
		return lo
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if mde(mid) <= goal {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
