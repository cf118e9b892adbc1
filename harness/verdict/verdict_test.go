package verdict

import (
	"errors"
	"math"
	"testing"

	"github.com/aclements/go-moremath/stats"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.6g, want %.6g (±%g)", what, got, want, tol)
	}
}

// scaled returns a with each value multiplied by exp(d[i]).
func scaled(a, d []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] * math.Exp(d[i])
	}
	return out
}

// The log ratios 0.01…0.05 have mean 0.03 and standard deviation
// √2.5e-4; with 4 degrees of freedom the t quantile at 0.975 is 2.776445
// (any t table), so the interval of the mean log ratio is 0.03 ± 0.019632.
func TestPairedKnownAnswer(t *testing.T) {
	a := []float64{100, 250, 80, 1000, 3}
	d := []float64{0.01, 0.02, 0.03, 0.04, 0.05}
	c, err := Paired(a, scaled(a, d), 0.05, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	se := math.Sqrt(2.5e-4) / math.Sqrt(5)
	near(t, "ratio", c.Ratio, math.Exp(0.03), 1e-12)
	near(t, "lo", c.Lo, math.Exp(0.03-2.776445*se), 1e-6)
	near(t, "hi", c.Hi, math.Exp(0.03+2.776445*se), 1e-6)
	near(t, "spread", c.Spread, math.Sqrt(2.5e-4), 1e-12)
	// The p-value of go-moremath's paired t-test, an implementation of
	// its own.
	ref, err := stats.OneSampleTTest(stats.Sample{Xs: d}, 0, stats.LocationDiffers)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "p", c.P, ref.P, 1e-9)
	if c.P > 0.05 || c.P < 0.01 {
		t.Errorf("p = %g: t = 4.24 with 4 degrees of freedom is 0.013", c.P)
	}
	// t quantile at 0.8, 4 df: 0.940965.
	near(t, "mde", c.MDE, math.Exp((2.776445+0.940965)*se)-1, 1e-5)
	if !c.Paired || c.N != 5 {
		t.Errorf("paired %v n %d", c.Paired, c.N)
	}
}

// A shared disturbance that moves both sides of a round by the same factor
// is cancelled by pairing and hidden by it unpaired: the rounds vary by
// ±30 % while the change is a steady 2 %.
func TestPairingCancelsASharedDisturbance(t *testing.T) {
	host := []float64{1.0, 1.3, 0.8, 1.1, 0.7, 1.25, 0.9, 1.05}
	a := make([]float64, len(host))
	b := make([]float64, len(host))
	for i, h := range host {
		a[i] = 100 * h * (1 + 0.002*float64(i%3-1)) // a little noise of its own
		b[i] = 102 * h * (1 + 0.002*float64((i+1)%3-1))
	}
	p, err := Paired(a, b, 0.05, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	u, err := Unpaired(a, b, 0.05, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	if p.Verdict(0.01, p.P < 0.05) != Changed || p.Lo < 1.01 || p.Hi > 1.03 {
		t.Errorf("paired: %+v, want a change of 2 %% found with a narrow interval", p)
	}
	if u.P < 0.05 {
		t.Errorf("unpaired: p = %g; the disturbance should hide the change", u.P)
	}
	if u.MDE < 10*p.MDE {
		t.Errorf("MDE paired %.4f unpaired %.4f: pairing should make it ten times smaller", p.MDE, u.MDE)
	}
}

// Logs 0, .1, .2 against .3, .4, .5: both variances 0.01, Welch's degrees
// of freedom (0.02/3)² / (2 (0.01/3)² / 2) = 4, t = 0.3/√(0.02/3).
func TestUnpairedKnownAnswer(t *testing.T) {
	a := []float64{1, math.Exp(0.1), math.Exp(0.2)}
	b := []float64{math.Exp(0.3), math.Exp(0.4), math.Exp(0.5)}
	c, err := Unpaired(a, b, 0.05, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	se := math.Sqrt(0.02 / 3)
	near(t, "ratio", c.Ratio, math.Exp(0.3), 1e-12)
	near(t, "lo", c.Lo, math.Exp(0.3-2.776445*se), 1e-6)
	near(t, "hi", c.Hi, math.Exp(0.3+2.776445*se), 1e-6)
	ref, err := stats.TwoSampleWelchTTest(stats.Sample{Xs: []float64{0.3, 0.4, 0.5}}, stats.Sample{Xs: []float64{0, 0.1, 0.2}}, stats.LocationDiffers)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "dof", ref.DoF, 4, 1e-9)
	near(t, "p", c.P, ref.P, 1e-9)
	if c.Paired {
		t.Error("unpaired comparison says it is paired")
	}
}

func TestDegenerateSamples(t *testing.T) {
	// Exact counts: the interval is the point.
	c, err := Paired([]float64{4, 4, 4}, []float64{5, 5, 5}, 0.05, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	if c.Lo != 1.25 || c.Hi != 1.25 || c.P != 0 || c.MDE != 0 {
		t.Errorf("exact change: %+v", c)
	}
	if v := c.Verdict(0.01, c.P < 0.05); v != Changed {
		t.Errorf("exact change is %v", v)
	}
	same, _ := Unpaired([]float64{7, 7}, []float64{7, 7, 7}, 0.05, 0.8)
	if same.P != 1 || same.Verdict(0.01, false) != Same {
		t.Errorf("identical exact samples: %+v, verdict %v", same, same.Verdict(0.01, false))
	}
	// One pair: no interval, nothing decided.
	one, _ := Paired([]float64{1}, []float64{2}, 0.05, 0.8)
	if !math.IsInf(one.Hi, 1) || one.P != 1 || !math.IsInf(one.MDE, 1) || one.Verdict(0.01, one.P < 0.05) != Unknown {
		t.Errorf("one pair: %+v", one)
	}
	for _, bad := range [][2][]float64{{{1, 0}, {1, 1}}, {{1, 2}, {-1, 2}}, {{1, math.NaN()}, {1, 1}}, {{1, math.Inf(1)}, {1, 1}}} {
		if _, err := Paired(bad[0], bad[1], 0.05, 0.8); !errors.Is(err, ErrNotPositive) {
			t.Errorf("Paired(%v, %v): %v, want ErrNotPositive", bad[0], bad[1], err)
		}
		if _, err := Unpaired(bad[0], bad[1], 0.05, 0.8); !errors.Is(err, ErrNotPositive) {
			t.Errorf("Unpaired(%v, %v): %v, want ErrNotPositive", bad[0], bad[1], err)
		}
	}
	if _, err := Paired([]float64{1}, []float64{1, 2}, 0.05, 0.8); err == nil {
		t.Error("pairs of different lengths accepted")
	}
	if _, err := Unpaired(nil, []float64{1, 2}, 0.05, 0.8); !errors.Is(err, ErrNoSamples) {
		t.Errorf("no samples: %v", err)
	}
}

func TestVerdicts(t *testing.T) {
	for _, tc := range []struct {
		c        Change
		margin   float64
		rejected bool
		want     Verdict
	}{
		{Change{Ratio: 1.05, Lo: 1.03, Hi: 1.07}, 0.01, true, Changed},
		{Change{Ratio: 0.95, Lo: 0.93, Hi: 0.97}, 0.01, true, Changed},
		// Significant but smaller than the margin, and inside it: the same.
		{Change{Ratio: 1.004, Lo: 1.001, Hi: 1.007}, 0.01, true, Same},
		// Significant, beyond the margin's edge with an interval across it.
		{Change{Ratio: 1.012, Lo: 1.002, Hi: 1.022}, 0.01, true, Changed},
		// Not significant, and the interval reaches beyond the margin.
		{Change{Ratio: 1.01, Lo: 0.98, Hi: 1.04}, 0.01, false, Unknown},
		{Change{Ratio: 1.001, Lo: 0.995, Hi: 1.006}, 0.01, false, Same},
		// A margin of 0: nothing is the same.
		{Change{Ratio: 1, Lo: 1, Hi: 1}, 0, false, Unknown},
		{Change{Ratio: 1.001, Lo: 1.0005, Hi: 1.0015}, 0, true, Changed},
		// Rejected across rows or not: the caller decides.
		{Change{Ratio: 1.05, Lo: 1.01, Hi: 1.09, P: 0.01}, 0.01, false, Unknown},
	} {
		if got := tc.c.Verdict(tc.margin, tc.rejected); got != tc.want {
			t.Errorf("%+v margin %g rejected %v: %v, want %v", tc.c, tc.margin, tc.rejected, got, tc.want)
		}
	}
}

func TestPairsReachTheTarget(t *testing.T) {
	for _, spread := range []float64{0.005, 0.018, 0.034, 0.1} {
		for _, target := range []float64{0.01, 0.02, 0.05} {
			n := Pairs(spread, target, 0.05, 0.8)
			if n < 2 {
				t.Fatalf("spread %g target %g: %d", spread, target, n)
			}
			if got := PairedMDE(spread, n, 0.05, 0.8); got > target {
				t.Errorf("spread %g target %g: %d pairs give an MDE of %g", spread, target, n, got)
			}
			if n > 2 {
				if got := PairedMDE(spread, n-1, 0.05, 0.8); got <= target {
					t.Errorf("spread %g target %g: %d pairs already give %g", spread, target, n-1, got)
				}
			}
		}
	}
	// The normal approximation for 1.8 % and 2 %, over the rank test's
	// efficiency: ((1.96+0.84)·0.018/ln 1.02)²·π/3 ≈ 6.8.
	if n := Pairs(0.018, 0.02, 0.05, 0.8); n < 7 || n > 11 {
		t.Errorf("Pairs(1.8 %%, 2 %%) = %d, want 7 to 11", n)
	}
	if Pairs(0, 0.02, 0.05, 0.8) != 2 || Pairs(math.NaN(), 0.02, 0.05, 0.8) != 0 || Pairs(1, 1e-6, 0.05, 0.8) != 0 || Pairs(0.01, 0, 0.05, 0.8) != 0 {
		t.Error("Pairs of a degenerate spread or target")
	}
	// A comparison reports the MDE of its own spread and size.
	a := []float64{1, 1, 1, 1, 1, 1, 1, 1}
	c, err := Paired(a, scaled(a, []float64{0.01, 0.03, 0.02, 0.015, 0.025, 0.02, 0.018, 0.022}), 0.05, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	if c.Test != "signed-rank" || c.MDE != PairedMDE(c.Spread, 8, 0.05, 0.8) {
		t.Errorf("%+v: MDE %g, want PairedMDE(%g, 8) = %g", c, c.MDE, c.Spread, PairedMDE(c.Spread, 8, 0.05, 0.8))
	}
}

// The worked example of Benjamini and Hochberg (JRSS B 57(1), 1995, §4):
// 15 p-values, of which the procedure at q = 0.05 rejects the four
// smallest; the adjusted values are R's p.adjust(method = "BH").
func TestBHWorkedExample(t *testing.T) {
	ps := []float64{0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.000}
	// Shuffled, so the order of the input does not matter.
	perm := []int{14, 3, 0, 9, 7, 1, 12, 5, 2, 11, 8, 4, 13, 10, 6}
	in := make([]float64, len(ps))
	for i, j := range perm {
		in[i] = ps[j]
	}
	adj, rej := BH(in, 0.05)
	want := map[float64]float64{0.0001: 0.0015, 0.0004: 0.003, 0.0019: 0.0095, 0.0095: 0.035625, 0.0201: 0.0603,
		0.0278: 0.0638571, 0.0298: 0.0638571, 0.0344: 0.0645, 0.0459: 0.0765}
	n := 0
	for i, p := range in {
		if rej[i] {
			n++
			if p > 0.0095 {
				t.Errorf("p = %g rejected", p)
			}
		}
		if w, ok := want[p]; ok {
			near(t, "adjusted", adj[i], w, 1e-6)
		}
	}
	if n != 4 {
		t.Errorf("%d rejected, want 4", n)
	}
	adj, rej = BH([]float64{0.01, math.NaN(), 0.04}, 0.05)
	if !math.IsNaN(adj[1]) || rej[1] || adj[0] != 0.02 || adj[2] != 0.04 || !rej[0] || !rej[2] {
		t.Errorf("NaN is not a test: %v %v", adj, rej)
	}
}

// The signed-rank test on R's example (wilcox.test's documentation, from
// Hollander and Wolfe): depression scores before and after, V = 40,
// p = 0.03906.
func TestSignedRankKnownAnswer(t *testing.T) {
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - y[i]
	}
	p, _, _, _ := signedRank(d, 0.05)
	near(t, "p", p, 0.0390625, 1e-9)
	// Six positive differences: W+ is the largest, p = 2/2^6; the Walsh
	// averages' median is 0.35, and at 6 pairs the 95 % interval is
	// their range.
	p, est, lo, hi := signedRank([]float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, 0.05)
	near(t, "p", p, 2.0/64, 1e-12)
	near(t, "estimate", est, 0.35, 1e-12)
	near(t, "lo", lo, 0.1, 1e-12)
	near(t, "hi", hi, 0.6, 1e-12)
	// Five pairs cannot reach 0.05: no interval.
	if _, _, lo, hi := signedRank([]float64{0.1, 0.2, 0.3, 0.4, 0.5}, 0.05); !math.IsInf(lo, -1) || !math.IsInf(hi, 1) {
		t.Errorf("5 pairs: interval [%g, %g]", lo, hi)
	}
	if rankPairs(0.05) != 6 || rankSamples(0.05) != 4 {
		t.Errorf("rank tests from %d pairs and %d a side, want 6 and 4", rankPairs(0.05), rankSamples(0.05))
	}
}

// The rank-sum comparison: 1…4 against 5…8, every difference positive
// (1 to 7, median 4): p = 2/C(8,4), and the interval their range.
func TestRankSumKnownAnswer(t *testing.T) {
	p, est, lo, hi, err := rankSum([]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "p", p, 2.0/70, 1e-9)
	near(t, "estimate", est, 4, 1e-12)
	near(t, "lo", lo, 1, 1e-12)
	near(t, "hi", hi, 7, 1e-12)
}

// A disturbed round (one pair 30 % off) widens the t interval of 12 pairs
// and barely moves the signed-rank one.
func TestRankTestResistsADisturbedRound(t *testing.T) {
	a := make([]float64, 12)
	d := make([]float64, 12)
	for i := range a {
		a[i] = 100
		d[i] = 0.02 + 0.002*float64(i%5-2)
	}
	clean, err := Paired(a, scaled(a, d), 0.05, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	d[7] = 0.3
	hit, err := Paired(a, scaled(a, d), 0.05, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	if hit.Test != "signed-rank" || hit.Verdict(0.01, hit.P < 0.05) != Changed || hit.Hi-hit.Lo > 2*(clean.Hi-clean.Lo) {
		t.Errorf("clean %+v, disturbed %+v: want the disturbed round to change little", clean, hit)
	}
	if hit.MDE > 2*clean.MDE {
		t.Errorf("MDE %g against %g: the robust spread should not follow one round", hit.MDE, clean.MDE)
	}
}
