package compare

import (
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
)

// byFork replaces the cell's samples by one per fork, the median of the
// fork's iterations, when every value has a fork (forks[i] > 0), and
// computes the spreads. Iterations of one process share its memory
// layout, heap and scheduling: they are not independent samples, and a
// test that counts them as such finds changes that are process noise. The
// median, not the mean, summarizes a fork, so one iteration disturbed
// from outside (a neighbour's burst on a shared host) does not move it.
func (c *Cell) byFork(forks []int) {
	groups := result.GroupByFork(c.Raw, forks)
	if groups == nil {
		return
	}
	c.Values, c.Forks = nil, len(groups)
	c.Keys = slices.Compact(slices.Sorted(slices.Values(forks))) // GroupByFork's order
	var means []float64
	var ss float64 // squared deviations from each fork's mean
	for _, group := range groups {
		g := stats.Sample{Xs: group}
		c.Values = append(c.Values, verdict.Median(group))
		m := g.Mean()
		means = append(means, m)
		for _, x := range group {
			ss += (x - m) * (x - m)
		}
	}
	if len(groups) >= 2 {
		c.Between = stats.StdDev(means)
	}
	if n := len(c.Raw) - len(groups); n > 0 {
		c.Within = math.Sqrt(ss / float64(n))
	}
}

// SpreadRatio is the spread of the forks' means over what the spread of
// their iterations explains for that many iterations per fork
// (Within/√k): about 1 when the forks differ only by their iterations'
// noise. It is NaN with fewer than 3 forks or no spread within them.
func (c *Cell) SpreadRatio() float64 {
	if c.Forks < 3 || !(c.Within > 0) || math.IsNaN(c.Between) {
		return math.NaN()
	}
	k := float64(len(c.Raw)) / float64(c.Forks)
	return c.Between / (c.Within / math.Sqrt(k))
}
