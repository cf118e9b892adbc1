package calibrate

import (
	"fmt"
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/ledgerbench/ledgerbench/harness/history"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
)

// Forks are one side's measurements of one benchmark: the measured
// iterations' scores of each fork, in fork order.
type Forks [][]float64

// Rate is a count of significant comparisons among N, with its exact
// binomial interval at 95 %.
type Rate struct {
	Hits, N int
	Rate    float64
	Lo, Hi  float64
}

// rate is hits of n; of no comparison at all, the rate is 0 and its
// interval all of [0, 1].
func rate(hits, n int) Rate {
	r := Rate{Hits: hits, N: n, Hi: 1}
	if n > 0 {
		r.Rate = float64(hits) / float64(n)
		r.Lo, r.Hi = ClopperPearson(hits, n, 0.95)
	}
	return r
}

// ClopperPearson is the exact two-sided interval at conf of a binomial
// proportion with k successes in n trials.
func ClopperPearson(k, n int, conf float64) (lo, hi float64) {
	a := (1 - conf) / 2
	lo, hi = 0, 1
	if k > 0 {
		lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(a)
	}
	if k < n {
		hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - a)
	}
	return lo, hi
}

// AAResult is what the A/A comparisons of one benchmark found.
type AAResult struct {
	Group int // forks a side per comparison
	// Fork counts the significant comparisons with one sample per fork;
	// Iteration with one sample per iteration, on the same data.
	Fork, Iteration Rate
	// ForkCV is the coefficient of variation of the forks' medians (both
	// sides pooled), and MDE the smallest relative change the fork-level
	// test detects with 80 % power at α with Group forks a side.
	ForkCV, MDE float64
}

// AA splits a and b into comparisons of group forks a side (the i-th
// comparison takes forks [i·group, (i+1)·group) of each side) and counts
// those significant at alpha with the Mann-Whitney U test.
func AA(a, b Forks, group int, alpha float64) AAResult {
	res := AAResult{Group: group}
	n := min(len(a), len(b)) / group
	var forkHits, iterHits int
	for i := range n {
		fa, fb := a[i*group:(i+1)*group], b[i*group:(i+1)*group]
		if p(medians(fa), medians(fb)) < alpha {
			forkHits++
		}
		if p(flatten(fa), flatten(fb)) < alpha {
			iterHits++
		}
	}
	res.Fork, res.Iteration = rate(forkHits, n), rate(iterHits, n)
	all := append(medians(a), medians(b)...)
	s := stats.Sample{Xs: all}
	res.ForkCV = s.StdDev() / s.Mean()
	res.MDE = MDE(res.ForkCV, group, alpha, 0.8)
	return res
}

// MDE is the smallest relative change a two-sided test at alpha detects
// with the given power between two samples of n values each whose
// coefficient of variation is cv: the normal approximation, divided by the
// square root of the Mann-Whitney U test's efficiency relative to the
// t-test on normal data (3/π).
func MDE(cv float64, n int, alpha, power float64) float64 {
	z := distuv.UnitNormal
	return (z.Quantile(1-alpha/2) + z.Quantile(power)) * cv * math.Sqrt(2/float64(n)) / math.Sqrt(3/math.Pi)
}

// Detect counts, over comparisons of group forks a side, how often the
// fork-level test finds base and changed different at alpha.
func Detect(base, changed Forks, group int, alpha float64) Rate {
	n := min(len(base), len(changed)) / group
	hits := 0
	for i := range n {
		if p(medians(base[i*group:(i+1)*group]), medians(changed[i*group:(i+1)*group])) < alpha {
			hits++
		}
	}
	return rate(hits, n)
}

// p is the Mann-Whitney U test's p-value of a against b; NewSample
// sorts what it is given, so it gets copies.
func p(a, b []float64) float64 {
	thr := benchmath.DefaultThresholds
	return benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(a), &thr), benchmath.NewSample(slices.Clone(b), &thr)).P
}

func medians(fs Forks) []float64 {
	out := make([]float64, 0, len(fs))
	for _, f := range fs {
		out = append(out, verdict.Median(f))
	}
	return out
}

func flatten(fs Forks) []float64 {
	var out []float64
	for _, f := range fs {
		out = append(out, f...)
	}
	return out
}

// Total is the rate of hits in n comparisons (several benchmarks' counts
// summed).
func Total(hits, n int) Rate { return rate(hits, n) }

// NightlyRate counts the flat series that nightly's change-point rule
// (history.Analyze with its defaults) would alarm on, built from A/A
// forks: a night is the median of perNight consecutive forks' medians (a
// nightly run of perNight forks), a series is nights consecutive nights,
// and nothing changed along it.
func NightlyRate(fs Forks, perNight, nights int) Rate {
	meds := medians(fs)
	var points []float64
	for i := 0; i+perNight <= len(meds); i += perNight {
		points = append(points, verdict.Median(meds[i:i+perNight]))
	}
	hits, n := 0, 0
	for i := 0; i+nights <= len(points); i += nights {
		s := &history.Series{Benchmark: "A/A", Unit: "sec/op"}
		for j, v := range points[i : i+nights] {
			s.Points = append(s.Points, history.Point{Value: v, EnvID: "e", Commit: fmt.Sprint(j)})
		}
		n++
		for _, sh := range history.Analyze(s, history.CPDOptions{Seed: uint64(i + 1)}) {
			if sh.New {
				hits++
				break
			}
		}
	}
	return rate(hits, n)
}
