package calibrate

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness/verdict"
)

// TestOracleIsScaleFree checks what makes the oracle valid whatever the
// noise: its Bayes factor does not change when every log ratio is scaled.
func TestOracleIsScaleFree(t *testing.T) {
	xs := []float64{0.031, 0.052, 0.044, -0.012, 0.067}
	want := oracleLogBF(xs, 1.5)
	for _, c := range []float64{1e-3, 0.1, 10, 1e4} {
		ys := make([]float64, len(xs))
		for i, x := range xs {
			ys[i] = c * x
		}
		if got := oracleLogBF(ys, 1.5); math.Abs(got-want) > 1e-9 {
			t.Errorf("log BF of the ratios times %g = %.12f, want %.12f", c, got, want)
		}
	}
	if got := oracleLogBF(xs, 0); math.Abs(got) > 1e-12 {
		t.Errorf("log BF against a change of 0 = %g, want 0", got)
	}
}

// TestOracleHoldsAlphaWhenLookedAtEveryRound checks Ville's inequality on
// simulated A/As with heavy tails (Student t with 3 degrees of freedom):
// the oracle's factor reaches 1/α at any of 40 looks in at most α of the
// streams, give or take the simulation's own error.
func TestOracleHoldsAlphaWhenLookedAtEveryRound(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	const streams, looks, alpha = 1000, 40, 0.05
	crossed := 0
	for range streams {
		var xs []float64
		for n := 1; n <= looks; n++ {
			xs = append(xs, 0.02*heavyTailed(r))
			if n >= 2 && oracleLogBF(xs, 1.9) >= math.Log(1/alpha) {
				crossed++
				break
			}
		}
	}
	lo, _ := ClopperPearson(crossed, streams, 0.99)
	if lo > alpha {
		t.Fatalf("crossed 1/α in %d of %d A/A streams: more than α = %g (99 %% interval from %.3f)", crossed, streams, alpha, lo)
	}
	if crossed == 0 {
		t.Fatalf("no A/A stream crossed: the factor never grows, it cannot be the oracle")
	}
}

// TestOracleNeedsFewerRoundsThanAbsTest checks that the oracle is the
// yardstick it is meant to be for a moderate change: on simulated rounds
// of +5 % at a 2.6 % spread, told the change, it decides in fewer rounds
// on average than the test ab uses (verdict.PairedSequential, which is not told), stopped at the
// same e-value, 1/α, without ab's margin.
func TestOracleNeedsFewerRoundsThanAbsTest(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	const rounds = 600
	c := Case{Name: "plant5", Change: 0.05, Dir: 1}
	ratios := make([]float64, rounds)
	for i := range rounds {
		ratios[i] = math.Log(1.05) + 0.026*r.NormFloat64()
		c.A = append(c.A, []float64{1})
		c.B = append(c.B, []float64{math.Exp(ratios[i])})
	}
	oracle := OracleRounds(c, verdict.MinSamples, 40, 0.05)
	if oracle <= verdict.MinSamples || oracle >= 40 {
		t.Fatalf("oracle's mean rounds %.2f: outside (%d, 40)", oracle, verdict.MinSamples)
	}
	var total, comparisons int
	for pos := 0; pos+40 <= rounds; comparisons++ {
		k := verdict.MinSamples
		for ; k < 40; k++ {
			a, b := make([]float64, k), make([]float64, k)
			for i := range k {
				a[i], b[i] = 1, math.Exp(ratios[pos+i])
			}
			ch, err := verdict.PairedSequential(a, b, 0.05, 0.8)
			if err != nil {
				t.Fatal(err)
			}
			if ch.E >= 1/0.05 {
				break
			}
		}
		total += k
		pos += k
	}
	ours := float64(total) / float64(comparisons)
	t.Logf("+5 %% at 2.6 %%: the oracle %.2f rounds, ab's test %.2f (%d comparisons)", oracle, ours, comparisons)
	if oracle >= ours {
		t.Errorf("the oracle took %.2f rounds, ab's test %.2f: told the change, it should be faster", oracle, ours)
	}
}

// heavyTailed is a Student t variate with 3 degrees of freedom, scaled to
// unit variance: heavy tails, as rounds on a shared host have.
func heavyTailed(r *rand.Rand) float64 {
	z := r.NormFloat64()
	var chi float64
	for range 3 {
		g := r.NormFloat64()
		chi += g * g
	}
	return z / math.Sqrt(chi/3) / math.Sqrt(3)
}
