package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness/verdict"
)

// roundsFile is an A/B file of one benchmark measured in rounds: round r
// (1-based, its fork number on both sides) has levels base[r-1] and
// exp[r-1], each fork of iters iterations at its level. The forks are
// written in the order given by order (indexes into the rounds), so the
// file's order need not be the rounds' order.
func roundsFile(base, exp []float64, order []int, iters int) []byte {
	var b strings.Builder
	b.WriteString("pkg: x\n\n")
	for s, side := range []string{"baseline", "experiment"} {
		fmt.Fprintf(&b, "toolchain: %s\n\n", side)
		levels := [][]float64{base, exp}[s]
		for _, r := range order {
			for i := range iters {
				fmt.Fprintf(&b, "BenchmarkW-2 10000 %.6f ns/op\n# benchctl: fork=%d iter=%d mode=avgt\n", levels[r], r+1, i)
			}
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// decision is the comparison of the only row of an A/B file.
func decision(t *testing.T, data []byte) *Decision {
	t.Helper()
	ts, err := BuildData("ab.txt", data, Options{Col: "toolchain", MinChange: DefaultMinChange})
	if err != nil {
		t.Fatal(err)
	}
	tab := ts.Tables[0]
	d := tab.Decision(tab.Rows[0], tab.Cols[1])
	if d == nil || d.Err != nil {
		t.Fatalf("no decision: %+v", d)
	}
	return d
}

// TestPairsAreRoundsNotRanks is the reproducer of a defect: the
// comparison paired the i-th smallest baseline fork with the i-th
// smallest experiment fork. Here the rounds' ratios run from 0.53 to 1.9
// (the experiment falls as the baseline rises), so by round nothing is
// shown; by rank every pair is equal and the change looked "same" at
// ±0.00 %.
func TestPairsAreRoundsNotRanks(t *testing.T) {
	var base, exp []float64
	for k := 1; k <= 10; k++ {
		base, exp = append(base, float64(9000+1000*k)), append(exp, float64(20000-1000*k))
	}
	d := decision(t, roundsFile(base, exp, identity(10), 1))
	if !d.Change.Paired || d.Change.N != 10 {
		t.Fatalf("not paired by 10 rounds: %+v", d.Change)
	}
	if d.Verdict != verdict.Unknown {
		t.Errorf("verdict %v, want unknown: %+v", d.Verdict, d.Change)
	}
	if half := (d.Change.Hi - d.Change.Lo) / 2; half < 0.2 {
		t.Errorf("interval [%.3f, %.3f] is ±%.1f %%, want wider than ±20 %%", d.Change.Lo, d.Change.Hi, 100*half)
	}
}

// exactSignedRankP is the exact two-sided p-value of Wilcoxon's
// signed-rank test of ds (no zeros, no ties in |d|), by enumerating the
// 2^n sign assignments: a reference computation independent of the
// verdict package's.
func exactSignedRankP(ds []float64) float64 {
	n := len(ds)
	rank := make([]int, n) // rank of |d_i|, 1-based
	for i := range ds {
		rank[i] = 1
		for j := range ds {
			if math.Abs(ds[j]) < math.Abs(ds[i]) {
				rank[i]++
			}
		}
	}
	w := 0
	for i, d := range ds {
		if d > 0 {
			w += rank[i]
		}
	}
	mean := float64(n*(n+1)) / 4
	dev := math.Abs(float64(w) - mean)
	extreme := 0
	for mask := range 1 << n {
		s := 0
		for i := range n {
			if mask&(1<<i) != 0 {
				s += rank[i]
			}
		}
		if math.Abs(float64(s)-mean) >= dev-1e-9 {
			extreme++
		}
	}
	return float64(extreme) / float64(int(1)<<n)
}

// walshMedian is the median of the Walsh averages (d_i + d_j)/2, i ≤ j.
func walshMedian(ds []float64) float64 {
	var w []float64
	for i := range ds {
		for j := i; j < len(ds); j++ {
			w = append(w, (ds[i]+ds[j])/2)
		}
	}
	slices.Sort(w)
	if len(w)%2 == 1 {
		return w[len(w)/2]
	}
	return (w[len(w)/2-1] + w[len(w)/2]) / 2
}

func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// sharedRounds draws n rounds whose two sides share a round effect of
// sdRound (relative) and differ by their own noise sdPair; the
// experiment is shift times the baseline.
func sharedRounds(rng *rand.Rand, n int, sdRound, sdPair, shift float64) (base, exp []float64) {
	for range n {
		level := 1000 * math.Exp(sdRound*rng.NormFloat64())
		base = append(base, level*math.Exp(sdPair*rng.NormFloat64()))
		exp = append(exp, shift*level*math.Exp(sdPair*rng.NormFloat64()))
	}
	return base, exp
}

// TestPairingFollowsTheRoundsNotTheFile checks the pairing's two
// properties: relabelling the rounds the same way on both sides, or
// writing the forks in another order, leaves the paired result exactly
// as it was; reversing the order of one side's rounds (a different
// pairing of the same values) changes it.
func TestPairingFollowsTheRoundsNotTheFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 7))
	for trial := range 20 {
		base, exp := sharedRounds(rng, 8, 0.1, 0.01, 1.02)
		want := decision(t, roundsFile(base, exp, identity(8), 3)).Change
		// A reference computation, independent of the verdict package:
		// the exact signed-rank p-value and the Hodges–Lehmann estimate
		// of the rounds' log ratios (R: wilcox.test(log(exp/base),
		// conf.int = TRUE)).
		var ds []float64
		for i := range base {
			ds = append(ds, math.Log(exp[i]/base[i]))
		}
		if p := exactSignedRankP(ds); math.Abs(want.P-p) > 1e-9 {
			t.Errorf("trial %d: p = %.6f, the exact signed-rank p of the rounds' log ratios is %.6f", trial, want.P, p)
		}
		if est := math.Exp(walshMedian(ds)); math.Abs(want.Ratio-est) > 1e-9 {
			t.Errorf("trial %d: ratio %.6f, the Hodges–Lehmann estimate of the rounds is %.6f", trial, want.Ratio, est)
		}

		perm := rng.Perm(8)
		pb, pe := make([]float64, 8), make([]float64, 8)
		for i, j := range perm {
			pb[j], pe[j] = base[i], exp[i]
		}
		if got := decision(t, roundsFile(pb, pe, identity(8), 3)).Change; !sameChange(got, want) {
			t.Errorf("trial %d: rounds relabelled alike on both sides: %+v, want %+v", trial, got, want)
		}
		if got := decision(t, roundsFile(base, exp, rng.Perm(8), 3)).Change; !sameChange(got, want) {
			t.Errorf("trial %d: forks written in another order: %+v, want %+v", trial, got, want)
		}
		rev := make([]float64, 8)
		for i := range exp {
			rev[i] = exp[7-i]
		}
		if got := decision(t, roundsFile(base, rev, identity(8), 3)).Change; sameChange(got, want) {
			t.Errorf("trial %d: one side's rounds reversed, yet the same result %+v", trial, got)
		}
	}
}

func sameChange(a, b verdict.Change) bool {
	close := func(x, y float64) bool { return math.Abs(x-y) <= 1e-12*math.Max(1, math.Abs(y)) }
	return a.N == b.N && a.Test == b.Test && close(a.Ratio, b.Ratio) && close(a.Lo, b.Lo) && close(a.Hi, b.Hi) && close(a.P, b.P)
}

// TestAAThroughTheDecision runs A/A comparisons through the path every
// command's rows take (a file, BuildData, the decision), for rounds that
// share a large effect (10 %) beside 1 % of their own noise, and for
// rounds whose sides share nothing (5 % each), both written in an order
// unrelated to their values. Paired by round, the false-positive rate is
// α; paired by rank, the independent sides were rejected in 41 %. With a
// planted +3 % under the 10 % round effect the change is found nearly
// always: only pairing by round can see 3 % under it.
func TestAAThroughTheDecision(t *testing.T) {
	const n, rounds = 300, 8
	rng := rand.New(rand.NewPCG(12, 7))
	for _, tc := range []struct {
		name            string
		sdRound, sdPair float64
	}{{"round effect", 0.1, 0.01}, {"independent sides", 0, 0.05}} {
		aa := 0
		for range n {
			base, exp := sharedRounds(rng, rounds, tc.sdRound, tc.sdPair, 1)
			if d := decision(t, roundsFile(base, exp, rng.Perm(rounds), 2)); d.Rejected {
				aa++
			}
		}
		// α = 0.05: at most 27 of 300 (0.09; the binomial's 99.9 % bound).
		if aa > 27 {
			t.Errorf("%s: A/A rejected in %d of %d comparisons, want at most 27 (α = 0.05)", tc.name, aa, n)
		}
		t.Logf("%s: A/A rejected %d of %d", tc.name, aa, n)
	}
	found := 0
	for range n {
		base, exp := sharedRounds(rng, rounds, 0.1, 0.01, 1.03)
		if d := decision(t, roundsFile(base, exp, rng.Perm(rounds), 2)); d.Verdict == verdict.Changed && d.Worse {
			found++
		}
	}
	if found < n*9/10 {
		t.Errorf("a +3 %% change under a 10 %% round effect found in %d of %d, want ≥ 90 %%", found, n)
	}
}
