package verdict

import "math"

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
// ratio has standard deviation spread: the smallest n ≥ 2 whose PairedMDE
// is at most target. It returns 0 when not even MaxPairs do (a spread
// that is not a finite positive number included, except 0, which needs
// 2).
func Pairs(spread, target, alpha, power float64) int {
	if spread == 0 {
		return 2
	}
	if !(spread > 0) || math.IsInf(spread, 1) || !(target > 0) {
		return 0
	}
	if PairedMDE(spread, MaxPairs, alpha, power) > target {
		return 0
	}
	// PairedMDE falls with n, but for the step where the rank test takes
	// over: search from 2, then by halving past it.
	for n := 2; n < rankPairs(alpha) && n <= MaxPairs; n++ {
		if PairedMDE(spread, n, alpha, power) <= target {
			return n
		}
	}
	return fewest(rankPairs(alpha), target, func(n int) float64 { return PairedMDE(spread, n, alpha, power) })
}

// fewest is the smallest n in [from, MaxPairs] whose mde(n) is at most
// target, for an mde that falls with n from there and reaches target at
// MaxPairs.
func fewest(from int, target float64, mde func(n int) float64) int {
	if mde(from) <= target {
		return from
	}
	lo, hi := from, MaxPairs
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if mde(mid) <= target {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
