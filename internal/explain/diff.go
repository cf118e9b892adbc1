package explain

import (
	"cmp"
	"fmt"
	"math"

	"github.com/aclements/go-moremath/stats"

	"github.com/ledgerbench/ledgerbench/harness/verdict"
)

// Confidence is the level of every interval of a Report.
const Confidence = 0.95

// MinPairs is the fewest pairs of profiling forks Diff compares: with
// two, Student's t has one degree of freedom and no function could be
// named.
const MinPairs = 3

// Delta is a change in CPU nanoseconds per op, experiment minus
// baseline: the mean over the pairs with its interval at Confidence.
type Delta struct {
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
}

// Excludes0 reports whether the interval lies on one side of no change.
func (d Delta) Excludes0() bool { return d.Lo > 0 || d.Hi < 0 }

// Function is one function's change.
type Function struct {
	Name string
	// Base and Exp are the function's flat CPU per op on each side (the
	// mean over its forks, each fork's share of its samples at its side's
	// level: see Diff); Flat and Cum its change, flat (in the function
	// itself) and cumulative (with its callees).
	Base, Exp float64
	Flat, Cum Delta
	// P is the paired t test's of the flat change, Q the same adjusted by
	// Benjamini–Hochberg over the functions of the Report with at least
	// MinTestedShare of the op's flat time, both sides together (1 for the
	// others); Named says Q is at most the Report's Alpha.
	P, Q  float64
	Named bool
	// CumQ is Q's counterpart for the cumulative change, over every
	// function: a frame of the flame graph is coloured only at most
	// Alpha.
	CumQ float64
	// Share is Flat.Mean over the Report's Whole: the part of the row's
	// change spent in the function (NaN without a Whole).
	Share float64
}

// Report is the function-level change of one case between two sides.
type Report struct {
	Pairs int
	Alpha float64
	// Base and Exp are each side's CPU per op (the mean over its forks),
	// Total the change of it.
	Base, Exp float64
	Total     Delta
	// Whole is the row's change in CPU per op, which shares divide: the
	// baseline's CPU per op times the row's measured change (its ratio
	// less 1), the measured forks' estimate being far more precise than
	// the profiles'; without a ratio, Total's mean when its interval
	// excludes no change; else NaN.
	Whole float64
	// Functions are every function sampled on either side: the named
	// first, by the size of their flat change, then the others likewise.
	Functions []Function
	// Notes say what limited the comparison (forks that did not pair).
	Notes []string
}

// Named are the report's named functions, the largest change first.
func (r *Report) Named() []Function {
	return named(r.Functions, func(f Function) bool { return f.Named })
}

// Level is the row's measured change of time per op: the ratio of
// experiment over baseline with its interval at confidence 1 − Alpha,
// and whether the row's verdict is changed (a function's share of the
// change then divides by it). The zero Level says there is none.
type Level struct {
	Ratio, Lo, Hi, Alpha float64
	Changed              bool
}

// logSE is the standard error of the level's log ratio, from its
// interval as a normal one (a confidence sequence's, wider, then counts
// as less precise than it is); 0 when there is none.
func (l Level) logSE() float64 {
	if !(l.Ratio > 0 && l.Lo > 0 && l.Hi > l.Lo && !math.IsInf(l.Hi, 1) && l.Alpha > 0 && l.Alpha < 1) {
		return 0
	}
	z := stats.NormalDist{Mu: 0, Sigma: 1}.InvCDF(1 - l.Alpha/2)
	return (math.Log(l.Hi) - math.Log(l.Lo)) / (2 * z)
}

// Diff compares the experiment's profiling forks with the baseline's,
// fork i of one with fork i of the other (the same round), at
// false-discovery rate alpha over the functions. level is the row's
// measured change (the zero Level when there is none).
//
// A fork's functions are its shares of its samples at its side's level,
// so a fork that ran slower or faster as a whole (a neighbour, the clock)
// moves no function. The baseline's level is its forks' mean CPU per op;
// the experiment's, that times the ratio of the sides' CPU per op, which
// two estimates give: the pairs of profiling forks, and the measured
// forks' change, decided or not; they are weighed by their precision,
// and the ratio's uncertainty widens every function's interval by the
// function's cost times it. The Report's Base, Exp and Total are the
// forks' own CPU per op.
func Diff(base, exp []Fork, alpha float64, level Level) (*Report, error) {
	nb, ne := len(base), len(exp)
	base, exp = byRound(base, exp)
	n := len(base)
	r := &Report{Pairs: n, Alpha: alpha}
	if nb != n || ne != n {
		r.Notes = append(r.Notes, fmt.Sprintf("%d baseline and %d experiment profiles: the %d rounds both have are paired", nb, ne, n))
	}
	if n < MinPairs {
		return nil, fmt.Errorf("%d pairs of profiles: at least %d are needed to name a function", n, MinPairs)
	}
	b, e, err := r.pairCosts(base, exp)
	if err != nil {
		return nil, err
	}
	tb, te := pairs(b, e, func(c perOp) float64 { return c.total })
	r.Base, r.Exp = stats.Mean(tb), stats.Mean(te)
	r.Total, _ = delta(tb, te, 0)
	switch r.Whole = math.NaN(); {
	case level.Changed && level.Ratio > 0 && level.Ratio != 1:
		r.Whole = r.Base * (level.Ratio - 1)
	case !level.Changed && r.Total.Excludes0():
		r.Whole = r.Total.Mean
	}
	ratio, se := sidesRatio(tb, te, level)
	lb, le := r.Base, r.Base*ratio
	b, e = leveled(b, lb), leveled(e, le)
	var cumP []float64
	for _, name := range functionNames(b, e) {
		fb, fe := pairs(b, e, func(c perOp) float64 { return c.flat[name] })
		cb, ce := pairs(b, e, func(c perOp) float64 { return c.cum[name] })
		f := Function{Name: name, Base: stats.Mean(fb), Exp: stats.Mean(fe), Q: 1}
		f.Flat, f.P = delta(fb, fe, f.Exp*se)
		var cumP1 float64
		f.Cum, cumP1 = delta(cb, ce, stats.Mean(ce)*se)
		f.Share = f.Flat.Mean / r.Whole
		cumP = append(cumP, cumP1)
		r.Functions = append(r.Functions, f)
	}
	r.correct(MinTestedShare*(lb+le), cumP)
	namedFirst(r.Functions, func(f Function) bool { return f.Named }, func(x, y Function) int {
		return cmp.Compare(math.Abs(y.Flat.Mean), math.Abs(x.Flat.Mean))
	})
	return r, nil
}

// sidesRatio is the ratio of the experiment's CPU per op to the
// baseline's and the standard error of its log: the pairs' (the mean of
// their log ratios) and the measured level's, weighed by the inverse of
// their variances. With neither precise (every pair alike and no level)
// it is the pairs' with no error.
func sidesRatio(tb, te []float64, level Level) (ratio, se float64) {
	logs := make([]float64, len(tb))
	for i := range tb {
		logs[i] = math.Log(te[i] / tb[i])
	}
	mp := stats.Mean(logs)
	sp := stats.StdDev(logs) / math.Sqrt(float64(len(logs)))
	sm := level.logSE()
	switch {
	case sm == 0 || level.Ratio <= 0:
		return math.Exp(mp), sp
	case sp == 0:
		return level.Ratio, sm
	}
	wp, wm := 1/(sp*sp), 1/(sm*sm)
	return math.Exp((wp*mp + wm*math.Log(level.Ratio)) / (wp + wm)), 1 / math.Sqrt(wp+wm)
}

// delta is the mean of the pairs' differences ys − xs with its interval
// at Confidence and the two-sided p value of no change, from Student's t
// over the pairs with the standard error widened by extra (a standard
// error the pairs do not see: the level's). The p value is 1 when
// nothing varies.
func delta(xs, ys []float64, extra float64) (Delta, float64) {
	d := make([]float64, len(xs))
	for i := range xs {
		d[i] = ys[i] - xs[i]
	}
	n := float64(len(d))
	m := stats.Mean(d)
	se := math.Sqrt(stats.Variance(d)/n + extra*extra)
	if !(se > 0) {
		return Delta{Mean: m, Lo: m, Hi: m}, 1
	}
	t := stats.TDist{V: n - 1}
	h := stats.InvCDF(t)(1-(1-Confidence)/2) * se
	return Delta{Mean: m, Lo: m - h, Hi: m + h}, 2 * (1 - t.CDF(math.Abs(m)/se))
}

// correct adjusts the functions' p values by Benjamini–Hochberg and
// names those at most the Report's Alpha. The family is the functions
// with time of their own, at least least (MinTestedShare of the op's, the
// two sides' flat together): one only on stacks has no flat change to
// test, and one with a few samples could not be named, but would weaken
// the correction for every other. cumP are the cumulative changes'
// p values, adjusted over every function.
func (r *Report) correct(least float64, cumP []float64) {
	var ps []float64
	var tested []int
	for i, f := range r.Functions {
		if f.Base+f.Exp >= least && f.Base+f.Exp > 0 {
			ps, tested = append(ps, f.P), append(tested, i)
		}
	}
	q, rejected := verdict.BH(ps, r.Alpha)
	for j, i := range tested {
		r.Functions[i].Q, r.Functions[i].Named = q[j], rejected[j]
	}
	cumQ, _ := verdict.BH(cumP, r.Alpha)
	for i := range r.Functions {
		r.Functions[i].CumQ = cumQ[i]
	}
}

// MinTestedShare is the least flat part of the op's CPU, both sides'
// together, of a function Diff tests. Choosing the family by the two
// sides' sum, which does not depend on the sign or size of the
// difference when nothing changed, keeps Benjamini–Hochberg's guarantee
// (independent filtering: Bourgon, Gentleman and Huber, PNAS 2010); the
// dozens of runtime functions a profile samples a few times each no
// longer dilute the correction for the functions that could be named.
const MinTestedShare = 0.001

// leveled scales each fork's costs to level CPU per op: its functions
// keep their shares of the fork's samples. A fork that ran slower or
// faster as a whole (a neighbour, the clock) then moves no function;
// the row's level comes from the measured forks, built to measure it.
func leveled(side []perOp, level float64) []perOp {
	out := make([]perOp, len(side))
	for i, c := range side {
		k := level / c.total
		out[i] = perOp{total: level, samples: c.samples, flat: map[string]float64{}, cum: map[string]float64{}}
		for n, v := range c.flat {
			out[i].flat[n] = v * k
		}
		for n, v := range c.cum {
			out[i].cum[n] = v * k
		}
	}
	return out
}

// pairCosts are the costs per op of the pairs of forks base[i], exp[i],
// with a note on the toolchains and on pairs of different rounds. Forks
// without a sample are an error.
func (r *Report) pairCosts(base, exp []Fork) (b, e []perOp, err error) {
	if note := toolchains(base, exp); note != "" {
		r.Notes = append(r.Notes, note)
	}
	b, e = make([]perOp, len(base)), make([]perOp, len(base))
	for i := range base {
		if b[i], err = costs(base[i]); err != nil {
			return nil, nil, err
		}
		if e[i], err = costs(exp[i]); err != nil {
			return nil, nil, err
		}
		if base[i].Round != exp[i].Round {
			r.Notes = append(r.Notes, fmt.Sprintf("pair %d joins baseline round %d with experiment round %d", i+1, base[i].Round, exp[i].Round))
		}
	}
	return b, e, r.sampled(b, e)
}

// FewSamples is the fewest samples a fork should hold: a function with a
// tenth of them is counted to ±30 % by one fork alone.
const FewSamples = 100

// sampled refuses forks without a sample and notes forks with few.
func (r *Report) sampled(sides ...[]perOp) error {
	least := int64(-1)
	for _, side := range sides {
		for _, c := range side {
			if least < 0 || c.samples < least {
				least = c.samples
			}
		}
	}
	switch {
	case least == 0:
		return fmt.Errorf("a profiling fork holds no CPU sample: its measured window is too short (runtime/pprof takes a sample per 10 ms of CPU, 100 in a window of 1 s; perf, where it can sample, 10,000)")
	case least < FewSamples:
		r.Notes = append(r.Notes, fmt.Sprintf("a profiling fork holds only %d samples: a function with a small part of the time cannot be resolved (runtime/pprof takes about 100 samples in a window of 1 s; perf, where it can sample, 10,000)", least))
	}
	return nil
}

// functionNames are the functions sampled on either side (flat or on a
// stack), in a fixed order.
func functionNames(sides ...[]perOp) []string {
	var cums []map[string]float64
	for _, side := range sides {
		for _, c := range side {
			cums = append(cums, c.cum)
		}
	}
	return sortedKeys(cums...)
}

// pairs are the values of v, baseline and experiment, by pair.
func pairs(b, e []perOp, v func(perOp) float64) (xs, ys []float64) {
	for i := range b {
		xs, ys = append(xs, v(b[i])), append(ys, v(e[i]))
	}
	return xs, ys
}

// byRound pairs the two sides' forks by round: it keeps the rounds both
// have, in order (a round whose fork failed on one side has no pair).
// Forks whose rounds are not distinct pair in order instead, the first
// of each side.
func byRound(base, exp []Fork) ([]Fork, []Fork) {
	rb, okb := roundsOf(base)
	re, oke := roundsOf(exp)
	if !okb || !oke {
		n := min(len(base), len(exp))
		return base[:n], exp[:n]
	}
	var b, e []Fork
	for _, f := range base {
		if rb[f.Round] && re[f.Round] {
			b = append(b, f)
		}
	}
	for _, f := range exp {
		if rb[f.Round] && re[f.Round] {
			e = append(e, f)
		}
	}
	return b, e
}

// roundsOf is the set of fs's rounds, and whether they are distinct.
func roundsOf(fs []Fork) (map[int]bool, bool) {
	seen := make(map[int]bool, len(fs))
	for _, f := range fs {
		if seen[f.Round] {
			return nil, false
		}
		seen[f.Round] = true
	}
	return seen, true
}
