package verdict

import (
	"fmt"
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
	"gonum.org/v1/gonum/stat/distuv"
)

// Stratum is one host's pairs of a comparison: A[i] and B[i] were
// measured on that host in one round.
type Stratum struct {
	Name string
	A, B []float64
}

// Stratified is a paired comparison over pairs measured on several
// hosts, each host a stratum: every pair is two sides of one host in one
// round, and the hosts may differ in speed, in noise and in the change
// itself. Each host's change is the mean of its pairs' log ratios, with
// its standard error from its own pairs only; the change is their mean
// weighted by their pairs (each pair counts once), with a t interval at
// the Welch–Satterthwaite degrees of freedom of that combination. So
// what differs between hosts, their speed and their own change, is not
// counted as noise: the interval is that of the change averaged over
// these hosts. The weights are the pairs, not the hosts' estimated
// variances: with a handful of pairs a host, inverse-variance weights
// called no change a change in 98 of 1,000 simulated comparisons at
// α = 5 % (TestStratifiedKnownAnswers). A host of fewer than two pairs has
// no variance of its own: it is left out and named in
// Heterogeneity.Skipped.
//
// Heterogeneity names the hosts whose own change disagrees with the
// others' beyond its interval: the host farthest from the others (a
// Welch t test of its mean against the pair-weighted mean of the rest) at
// α divided by the hosts still in question, then again without it, while
// three or more remain; of two hosts that disagree, both are named.
func Stratified(strata []Stratum, alpha, power float64) (Change, Heterogeneity, error) {
	var h Heterogeneity
	var est []hostEstimate
	n := 0
	for _, s := range strata {
		d, err := logRatios(s.A, s.B)
		if err != nil {
			return Change{}, h, fmt.Errorf("%s: %w", s.Name, err)
		}
		if len(d) < 2 {
			h.Skipped = append(h.Skipped, s.Name)
			continue
		}
		n += len(d)
		x := stats.Sample{Xs: d}
		est = append(est, hostEstimate{name: s.Name, n: len(d), mean: x.Mean(), se: x.StdDev() / math.Sqrt(float64(len(d)))})
	}
	c := Change{Paired: true, N: n, Test: "stratified t"}
	if len(est) == 0 {
		c.Ratio, c.Lo, c.Hi, c.P, c.MDE, c.Spread = 1, 0, math.Inf(1), 1, math.Inf(1), math.NaN()
		return c, h, nil
	}
	mean, se, df := combine(est)
	c.Ratio = math.Exp(mean)
	c.Spread = se * math.Sqrt(float64(n))
	if n < MinSamples && se > 0 {
		c.Lo, c.Hi, c.P, c.MDE = 0, math.Inf(1), 1, math.Inf(1)
		return c, h, nil
	}
	c.finish(mean, se, df, alpha, power)
	h.Hosts = len(est)
	h.Disagree = disagreeing(est, alpha)
	return c, h, nil
}

// Heterogeneity is what a stratified comparison says of its hosts.
type Heterogeneity struct {
	// Hosts counts the hosts the change was estimated over.
	Hosts int
	// Disagree are the hosts whose own change differs from the others'.
	Disagree []HostChange
	// Skipped are the hosts with too few pairs to weigh.
	Skipped []string
}

// HostChange is one host's change against the other hosts'.
type HostChange struct {
	Name string
	// Ratio, Lo, Hi: the host's own change and its interval; Others is
	// the other hosts' weighted change; P the p-value of their
	// difference.
	Ratio, Lo, Hi, Others, P float64
}

func (hc HostChange) String() string {
	return fmt.Sprintf("%s: %+.1f %% [%+.1f, %+.1f] against %+.1f %% of the other hosts (p=%.2g)", hc.Name,
		100*(hc.Ratio-1), 100*(hc.Lo-1), 100*(hc.Hi-1), 100*(hc.Others-1), hc.P)
}

// hostEstimate is one host's mean log ratio and its standard error.
type hostEstimate struct {
	name     string
	n        int
	mean, se float64
}

// combine is the pair-weighted mean of the estimates, its standard
// error and the Welch–Satterthwaite degrees of freedom of its variance,
// Σ c²·se² with c = n/N, over the hosts' own n−1 (1 when no host varies:
// an exact count, se 0).
func combine(est []hostEstimate) (mean, se, df float64) {
	var n float64
	for _, e := range est {
		n += float64(e.n)
	}
	var v, den float64
	for _, e := range est {
		c := float64(e.n) / n
		mean += c * e.mean
		vh := c * c * e.se * e.se
		v += vh
		den += vh * vh / float64(e.n-1)
	}
	if v == 0 {
		return mean, 0, 1
	}
	return mean, math.Sqrt(v), v * v / den
}

// disagreeing names the hosts whose change differs from the others': the
// farthest at α over the hosts in question, then the next without it,
// while three or more are in question; of a comparison over two hosts,
// both are named when they differ (neither is the odd one out).
func disagreeing(est []hostEstimate, alpha float64) []HostChange {
	var out []HostChange
	rest := slices.Clone(est)
	for len(rest) >= 3 || len(est) == 2 && len(out) == 0 {
		// The farthest by its t statistic: p-values of hosts far apart
		// both underflow to 0.
		worst, wt, wp, wo := -1, -1.0, 1.0, 0.0
		for i, e := range rest {
			others := slices.Concat(rest[:i], rest[i+1:])
			if t, p, om := against(e, others); t > wt {
				worst, wt, wp, wo = i, t, p, om
			}
		}
		if worst < 0 || wp >= alpha/float64(len(rest)) {
			break
		}
		if len(rest) == 2 {
			for i, e := range rest {
				_, _, om := against(e, rest[1-i:2-i])
				out = append(out, hostChange(e, om, wp, alpha))
			}
			break
		}
		out = append(out, hostChange(rest[worst], wo, wp, alpha))
		rest = slices.Delete(rest, worst, worst+1)
	}
	return out
}

// against is host e's mean against the others' pair-weighted mean:
// Welch's t statistic (its absolute value; +Inf for exact counts that
// differ), its p-value, and the others' mean.
func against(e hostEstimate, others []hostEstimate) (t, p, othersMean float64) {
	om, ose, odf := combine(others)
	v1, v2 := e.se*e.se, ose*ose
	if v1+v2 == 0 {
		if e.mean == om {
			return 0, 1, om
		}
		return math.Inf(1), 0, om
	}
	df1 := float64(e.n - 1)
	df := (v1 + v2) * (v1 + v2) / (v1*v1/df1 + v2*v2/odf)
	t = math.Abs(e.mean-om) / math.Sqrt(v1+v2)
	return t, math.Min(1, 2*distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(t)), om
}

// hostChange is host e's change with its interval at 1−α, beside the
// others' mean om.
func hostChange(e hostEstimate, om, p, alpha float64) HostChange {
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(e.n - 1)}.Quantile(1 - alpha/2)
	return HostChange{Name: e.name, Ratio: math.Exp(e.mean), Lo: math.Exp(e.mean - q*e.se), Hi: math.Exp(e.mean + q*e.se), Others: math.Exp(om), P: p}
}
