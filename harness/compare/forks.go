package compare

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/aclements/go-moremath/mathx"
	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"

	"github.com/ledgerbench/ledgerbench/harness/result"
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
		c.Values = append(c.Values, g.Copy().Sort().Quantile(0.5))
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

// MinP is the smallest two-sided p-value the Mann-Whitney U test can give
// for samples of n1 and n2 values: 2 / C(n1+n2, n1), when one sample lies
// wholly above the other. At 3 forks a side it is 0.1.
func MinP(n1, n2 int) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}
	return math.Min(1, 2/mathx.Choose(n1+n2, n1))
}

// powerless says, once per pair of sample sizes, which comparisons cannot
// be significant at α whatever the data: their samples are too few for
// the test to reach α (3 forks against 3 never do at 0.05).
func (ts *Tables) powerless() []string {
	type pair struct{ a, b int }
	count := map[pair]int{}
	for _, t := range ts.Tables {
		if t.Assumption != benchmath.AssumeNothing || len(t.Cols) < 2 {
			continue
		}
		for _, row := range t.Rows {
			base := t.cell(row, t.Cols[0])
			for _, col := range t.Cols[1:] {
				c := t.cell(row, col)
				if base == nil || c == nil {
					continue
				}
				if MinP(len(base.Values), len(c.Values)) >= ts.Options.Alpha {
					count[pair{len(base.Values), len(c.Values)}]++
				}
			}
		}
	}
	var out []string
	for p, n := range count {
		need := p.a
		for MinP(need, need) >= ts.Options.Alpha && need < 1000 {
			need++
		}
		out = append(out, fmt.Sprintf("%d comparison(s) of %d against %d samples cannot be significant at α = %g: the smallest p-value their test can give is %.3f; %d samples a side can reach it",
			n, p.a, p.b, ts.Options.Alpha, MinP(p.a, p.b), need))
	}
	sort.Strings(out)
	return out
}
