package verdict

import (
	"slices"

	"github.com/aclements/go-moremath/stats"
)

// MeanInterval is the mean of xs and the half width of its Student-t
// interval at the given confidence, each value one independent sample: a
// fork's mean score is one (the iterations of one process are not
// independent). The half width is +Inf with fewer than 2 values. It is
// the interval of one side's score (a report's ± error, --precision's
// stopping rule), not of a change. The values are summed in ascending
// order, so the figures do not depend on the order of the forks.
func MeanInterval(xs []float64, confidence float64) (mean, half float64) {
	mean, lo, hi := stats.MeanCI(slices.Sorted(slices.Values(xs)), confidence)
	return mean, (hi - lo) / 2
}

// Median is the median of xs (NaN when empty), xs left unsorted: a
// fork's score from its iterations, a cell's center from its forks.
func Median(xs []float64) float64 {
	return stats.Sample{Xs: xs}.Copy().Sort().Quantile(0.5)
}
