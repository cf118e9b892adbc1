package verdict

import (
	"errors"
	"fmt"
	"math"

	"github.com/aclements/go-moremath/stats"
	"gonum.org/v1/gonum/stat/distuv"
)

// ErrNotPositive is returned for samples with a value that is zero,
// negative or not finite: their logarithms, and so their ratio, do not
// exist.
var ErrNotPositive = errors.New("a value is not a positive number: no ratio")

// ErrNoSamples is returned when a side has no sample.
var ErrNoSamples = errors.New("no samples")

// Change is the change of the experiment against the baseline: the ratio
// of their geometric means (of the pairs' ratios, when paired), its
// interval, the two-sided p-value of no change, and the smallest change
// the test could have found.
type Change struct {
	Paired bool
	// Test names the test: "signed-rank" or "t" (paired), "rank-sum" or
	// "Welch" (unpaired); see the package doc for which when.
	Test string
	// N is the number of pairs, or of the smaller side's samples.
	N int
	// Ratio is the estimated experiment/baseline ratio (1.02: 2 % more);
	// Lo and Hi bound it at the confidence 1-α the comparison was made
	// at. With fewer than two samples a side they are 0 and +Inf.
	Ratio, Lo, Hi float64
	// P is the p-value of the hypothesis that nothing changed.
	P float64
	// Sequential says the comparison is anytime-valid ([PairedSequential],
	// [UnpairedSequential]): E is its e-value against no change (1 with
	// too few samples; 0, no e-value, when not sequential), P is
	// min(1, 1/E), and Lo, Hi a confidence sequence.
	Sequential bool
	E          float64
	// MDE is the smallest relative change (0.03: 3 %) the test detects at
	// α with the power asked for, at the spread these samples show: the
	// change a run of this size could have seen. +Inf with fewer than
	// two samples a side; 0 when the samples do not vary at all.
	MDE float64
	// Spread is the noise of one sample of the comparison on the log
	// scale: the standard deviation of the log ratios (paired), or of the
	// difference of one log value of each side (unpaired); robust (1.4826
	// MAD) where a rank test decides.
	Spread float64
}

// Pct is the change in percent.
func (c Change) Pct() float64 { return (c.Ratio - 1) * 100 }

// Interval is the change and its interval in percent, to a tenth:
// "+93.2 % [+68.6, +121.3]".
func (c Change) Interval() string {
	return fmt.Sprintf("%+.1f %% [%+.1f, %+.1f]", c.Pct(), (c.Lo-1)*100, (c.Hi-1)*100)
}

// Paired compares b with a sample by sample: a[i] and b[i] were measured
// together (one round). The test is a one-sample t-test of the log
// ratios; the interval is at confidence 1-alpha and the MDE at the given
// power.
func Paired(a, b []float64, alpha, power float64) (Change, error) {
	d, err := logRatios(a, b)
	if err != nil {
		return Change{}, err
	}
	s := stats.Sample{Xs: d}
	n := len(d)
	c := Change{Paired: true, N: n, Ratio: math.Exp(s.Mean()), Test: "t"}
	if n < 2 {
		c.Lo, c.Hi, c.P, c.MDE, c.Spread = 0, math.Inf(1), 1, math.Inf(1), math.NaN()
		return c, nil
	}
	if n >= rankPairs(alpha) {
		p, est, lo, hi := signedRank(d, alpha)
		c.Test, c.P, c.Ratio, c.Lo, c.Hi = "signed-rank", p, math.Exp(est), math.Exp(lo), math.Exp(hi)
		c.Spread = RobustSD(d)
		c.MDE = PairedMDE(c.Spread, n, alpha, power)
		return c, nil
	}
	sd := s.StdDev()
	c.Spread = sd
	if n < MinSamples && sd > 0 {
		c.Lo, c.Hi, c.P, c.MDE = 0, math.Inf(1), 1, math.Inf(1)
		return c, nil
	}
	c.finish(s.Mean(), sd/math.Sqrt(float64(n)), float64(n-1), alpha, power)
	return c, nil
}

// MinSamples is the fewest pairs, or samples a side, a comparison needs
// for an interval (unless the samples do not vary at all: exact counts):
// with 2, the t interval has one degree of freedom, and two rounds that
// a burst of the host hit alike look like a change.
const MinSamples = 3

// rankEfficiency is the asymptotic efficiency of the rank tests relative
// to the t-test on normal data, 3/π: they need π/3 times the samples
// there, and fewer under heavy tails.
const rankEfficiency = 3 / math.Pi

// PairedMDE is the smallest relative change a paired comparison of n
// pairs detects at alpha with the given power, when one pair's log ratio
// has standard deviation spread: (t(1-α/2) + t(power)) × spread/√n with
// n-1 degrees of freedom, for the signed-rank test (from rankPairs(alpha)
// pairs) over √(3/π).
func PairedMDE(spread float64, n int, alpha, power float64) float64 {
	if n < MinSamples {
		return math.Inf(1)
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}
	eff := 1.0
	if n >= rankPairs(alpha) {
		eff = rankEfficiency
	}
	return math.Exp((t.Quantile(1-alpha/2)+t.Quantile(power))*spread/math.Sqrt(float64(n)*eff)) - 1
}

// Unpaired compares independent samples a and b with Welch's t-test of
// their logarithms; the interval is at confidence 1-alpha and the MDE at
// the given power.
func Unpaired(a, b []float64, alpha, power float64) (Change, error) {
	la, lb, err := logSides(a, b)
	if err != nil {
		return Change{}, err
	}
	sa, sb := stats.Sample{Xs: la}, stats.Sample{Xs: lb}
	diff := sb.Mean() - sa.Mean()
	c := Change{N: min(len(a), len(b)), Ratio: math.Exp(diff), Test: "Welch"}
	if len(a) < 2 || len(b) < 2 {
		c.Lo, c.Hi, c.P, c.MDE, c.Spread = 0, math.Inf(1), 1, math.Inf(1), math.NaN()
		return c, nil
	}
	if c.N >= rankSamples(alpha) {
		p, est, lo, hi, err := rankSum(la, lb, alpha)
		if err != nil {
			return Change{}, err
		}
		ra, rb := RobustSD(la), RobustSD(lb)
		c.Test, c.P, c.Ratio, c.Lo, c.Hi = "rank-sum", p, math.Exp(est), math.Exp(lo), math.Exp(hi)
		c.Spread = math.Hypot(ra, rb)
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(a) + len(b) - 2)}
		se := math.Sqrt((ra*ra/float64(len(a)) + rb*rb/float64(len(b))) / rankEfficiency)
		c.MDE = math.Exp((t.Quantile(1-alpha/2)+t.Quantile(power))*se) - 1
		return c, nil
	}
	va, vb := sa.Variance()/float64(len(a)), sb.Variance()/float64(len(b))
	se := math.Sqrt(va + vb)
	if c.N < MinSamples && se > 0 {
		c.Lo, c.Hi, c.P, c.MDE, c.Spread = 0, math.Inf(1), 1, math.Inf(1), se*math.Sqrt(float64(c.N))
		return c, nil
	}
	c.Spread = se * math.Sqrt(float64(c.N))
	// Welch–Satterthwaite degrees of freedom.
	df := (va + vb) * (va + vb) / (va*va/float64(len(a)-1) + vb*vb/float64(len(b)-1))
	c.finish(diff, se, df, alpha, power)
	return c, nil
}

// finish sets the interval, p-value and MDE of a log difference mean
// with standard error se and df degrees of freedom. A standard error of
// zero is an exact comparison: the interval is the point, and the
// p-value 0 or 1.
func (c *Change) finish(mean, se, df, alpha, power float64) {
	if se == 0 {
		c.Lo, c.Hi, c.MDE, c.P = c.Ratio, c.Ratio, 0, 1
		if mean != 0 {
			c.P = 0
		}
		return
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	q := t.Quantile(1 - alpha/2)
	c.Lo, c.Hi = math.Exp(mean-q*se), math.Exp(mean+q*se)
	c.P = math.Min(1, 2*t.Survival(math.Abs(mean)/se))
	c.MDE = math.Exp((q+t.Quantile(power))*se) - 1
}

// logRatios are the log ratios b[i]/a[i] of paired samples.
func logRatios(a, b []float64) ([]float64, error) {
	if len(a) != len(b) {
		return nil, errors.New("paired samples of different lengths")
	}
	if len(a) == 0 {
		return nil, ErrNoSamples
	}
	d := make([]float64, len(a))
	for i := range a {
		la, lb, err := logs(a[i], b[i])
		if err != nil {
			return nil, err
		}
		d[i] = lb - la
	}
	return d, nil
}

func logs(a, b float64) (float64, float64, error) {
	if !positive(a) || !positive(b) {
		return 0, 0, ErrNotPositive
	}
	return math.Log(a), math.Log(b), nil
}

// logSides are the logarithms of two independent sides' samples.
func logSides(a, b []float64) (la, lb []float64, err error) {
	if len(a) == 0 || len(b) == 0 {
		return nil, nil, ErrNoSamples
	}
	if la, err = logAll(a); err != nil {
		return nil, nil, err
	}
	if lb, err = logAll(b); err != nil {
		return nil, nil, err
	}
	return la, lb, nil
}

func logAll(xs []float64) ([]float64, error) {
	out := make([]float64, len(xs))
	for i, x := range xs {
		if !positive(x) {
			return nil, ErrNotPositive
		}
		out[i] = math.Log(x)
	}
	return out, nil
}

func positive(x float64) bool { return x > 0 && !math.IsInf(x, 1) }
