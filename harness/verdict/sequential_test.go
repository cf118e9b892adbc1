package verdict

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// noise draws one round's log ratio of an A/A comparison.
type noise struct {
	name string
	draw func(r *rand.Rand) float64
}

// aaNoises are the A/A streams the confidence sequence must hold on:
// normal, heavy-tailed (Student's t with 3 degrees of freedom) and a
// normal spread with one round in twenty off by ±18 %, either way (a
// disturbed round hits whichever side ran then; the side order is
// random).
func aaNoises() []noise {
	return []noise{
		{"normal", func(r *rand.Rand) float64 { return 0.01 * r.NormFloat64() }},
		{"t3", func(r *rand.Rand) float64 {
			return 0.01 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: 3, Src: r}.Rand()
		}},
		{"outliers", func(r *rand.Rand) float64 {
			x := 0.005 * r.NormFloat64()
			if r.IntN(20) == 0 {
				x += math.Copysign(math.Log(1.18), r.NormFloat64())
			}
			return x
		}},
	}
}

// stream is a paired comparison's rounds: baseline 1, experiment e^d.
func stream(r *rand.Rand, n int, shift float64, draw func(*rand.Rand) float64) (a, b []float64) {
	for range n {
		a = append(a, 1)
		b = append(b, math.Exp(shift+draw(r)))
	}
	return a, b
}

// TestSequentialCoverage looks at every round from 3 to 40 of many A/A
// streams, as ab --until-decided does, and counts the streams whose test
// ever rejected no change or whose confidence sequence ever left out the
// true ratio 1: at most α of them, at every look at once.
func TestSequentialCoverage(t *testing.T) {
	const streams, rounds, alpha = 1000, 40, 0.05
	for _, nz := range aaNoises() {
		t.Run(nz.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(40, uint64(len(nz.name))))
			var rejected, missed int
			for range streams {
				a, b := stream(r, rounds, 0, nz.draw)
				var rej, miss bool
				for n := MinSamples; n <= rounds; n++ {
					c, err := PairedSequential(a[:n], b[:n], alpha, 0.8)
					if err != nil {
						t.Fatal(err)
					}
					rej = rej || c.E >= 1/alpha
					miss = miss || c.Lo > 1 || c.Hi < 1
				}
				if rej {
					rejected++
				}
				if miss {
					missed++
				}
			}
			// 5 % of 1000 is 50; a binomial's 99.9 % upper bound is 73.
			t.Logf("%s: rejected in %d, missed 1 in %d of %d streams", nz.name, rejected, missed, streams)
			if rejected > 73 || missed > 73 {
				t.Errorf("%s: rejected in %d and missed 1 in %d of %d A/A streams looked at every round: more than α = %g", nz.name, rejected, missed, streams, alpha)
			}
		})
	}
}

// TestSequentialDecidesLargeChanges: a −50 % change is rejected by the
// 4th round at a round's spread of 1 % to 5 %, and a +5 % at 1 % within
// 8 rounds, in nearly every stream; the interval then holds the change.
func TestSequentialDecidesLargeChanges(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		ratio, spread float64
		by            int
	}{{0.5, 0.01, 4}, {0.5, 0.05, 4}, {1.05, 0.01, 8}} {
		decided := 0
		for range 200 {
			a, b := stream(r, tc.by, math.Log(tc.ratio), func(r *rand.Rand) float64 { return tc.spread * r.NormFloat64() })
			for n := MinSamples; n <= tc.by; n++ {
				c, _ := PairedSequential(a[:n], b[:n], 0.05, 0.8)
				if c.E >= 20 {
					if c.Hi < 1 == (tc.ratio < 1) && c.Lo <= tc.ratio && tc.ratio <= c.Hi {
						decided++
					}
					break
				}
			}
		}
		if decided < 196 {
			t.Errorf("ratio %g at spread %g: decided with an interval holding it by round %d in %d of 200 streams, want ≥ 196", tc.ratio, tc.spread, tc.by, decided)
		}
	}
}

// TestSequentialWiderThanFixed: looking at every round costs width: the
// confidence sequence is wider than the fixed-n t interval of the same
// pairs, and narrows, in units of the pairs' spread, as pairs are added.
func TestSequentialWiderThanFixed(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a, b := stream(r, 40, 0.02, func(r *rand.Rand) float64 { return 0.01 * r.NormFloat64() })
	prev := math.Inf(1)
	for _, n := range []int{3, 5, 10, 20, 40} {
		s, _ := PairedSequential(a[:n], b[:n], 0.05, 0.8)
		f, _ := Paired(a[:n], b[:n], 0.05, 0.8)
		sw, fw := math.Log(s.Hi/s.Lo), math.Log(f.Hi/f.Lo)
		if !(sw > fw) {
			t.Errorf("n=%d: sequence [%g, %g] not wider than the fixed interval [%g, %g]", n, s.Lo, s.Hi, f.Lo, f.Hi)
		}
		if rel := sw / s.Spread; !(rel < prev) {
			t.Errorf("n=%d: sequence width %g spreads did not narrow from %g", n, rel, prev)
		} else {
			prev = rel
		}
		if s.Test != SequentialTest || !s.Sequential || math.Abs(s.P-math.Min(1, 1/s.E)) > 1e-12 {
			t.Errorf("n=%d: %+v", n, s)
		}
	}
}

func TestSequentialEdges(t *testing.T) {
	// Too few pairs: no decision, no interval.
	c, err := PairedSequential([]float64{1, 1}, []float64{2, 2}, 0.05, 0.8)
	if err != nil || c.E != 1 || !math.IsInf(c.Hi, 1) {
		t.Errorf("2 pairs: %+v, %v", c, err)
	}
	// No spread and a change: the e-value is the largest three pairs
	// give, (1+3g)/5 at g = 10⁴.
	c, _ = PairedSequential([]float64{1, 1, 1}, []float64{2, 2, 2}, 0.05, 0.8)
	if c.E < 5000 || c.Lo != 2 || c.Hi != 2 {
		t.Errorf("exact change: %+v", c)
	}
	// No spread, no change.
	c, _ = PairedSequential([]float64{1, 1, 1}, []float64{1, 1, 1}, 0.05, 0.8)
	if c.E != 1 || c.P != 1 || c.Lo != 1 {
		t.Errorf("exact same: %+v", c)
	}
	if _, err := PairedSequential([]float64{1, 0}, []float64{1, 1}, 0.05, 0.8); err != ErrNotPositive {
		t.Errorf("zero: %v", err)
	}
	if _, err := UnpairedSequential(nil, []float64{1}, 0.05, 0.8); err != ErrNoSamples {
		t.Errorf("empty side: %v", err)
	}
}

// TestUnpairedSequentialCoverage is TestSequentialCoverage for two
// independent sides, one fork a side added per round.
func TestUnpairedSequentialCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const streams, rounds = 600, 30
	rejected, missed := 0, 0
	for range streams {
		a, b := make([]float64, rounds), make([]float64, rounds)
		for i := range a {
			a[i], b[i] = math.Exp(0.02*r.NormFloat64()), math.Exp(0.02*r.NormFloat64())
		}
		var rej, miss bool
		for n := MinSamples; n <= rounds; n++ {
			c, _ := UnpairedSequential(a[:n], b[:n], 0.05, 0.8)
			rej = rej || c.E >= 20
			miss = miss || c.Lo > 1 || c.Hi < 1
		}
		if rej {
			rejected++
		}
		if miss {
			missed++
		}
	}
	// 5 % of 600 is 30; the 99.9 % upper bound is 48.
	if rejected > 48 || missed > 48 {
		t.Errorf("unpaired A/A: rejected in %d, missed 1 in %d of %d streams", rejected, missed, streams)
	}
	a, b := []float64{1, 1.01, 0.99, 1}, []float64{2, 2.02, 1.98, 2}
	if c, _ := UnpairedSequential(a, b, 0.05, 0.8); !(c.E >= 20 && c.Lo > 1.9 && c.Hi < 2.1) {
		t.Errorf("a doubling: %+v", c)
	}
}

// TestEBH checks e-BH against worked examples: with m = 4 at q = 0.05 the
// k largest e-values are rejected when the k-th is at least 4/(0.05k).
func TestEBH(t *testing.T) {
	for _, tc := range []struct {
		es       []float64
		rejected []bool
		adjusted []float64
	}{
		// 80 is needed alone, 40 for two: 50 ≥ 40.
		{[]float64{200, 50, 3, 1}, []bool{true, true, false, false}, []float64{0.02, 0.04, 4.0 / 9, 1}},
		// 40 < 80 and 25 < 40: none, though 40 alone is 1/α·2.
		{[]float64{40, 25, 3, 0.5}, []bool{false, false, false, false}, []float64{0.08, 0.08, 4.0 / 9, 1}},
		// A NaN is no test: m = 2.
		{[]float64{math.NaN(), 45, 30}, []bool{false, true, true}, []float64{math.NaN(), 1.0 / 30, 1.0 / 30}},
	} {
		adj, rej := EBH(tc.es, 0.05)
		for i := range tc.es {
			if rej[i] != tc.rejected[i] || !(math.Abs(adj[i]-tc.adjusted[i]) < 1e-12 || math.IsNaN(adj[i]) && math.IsNaN(tc.adjusted[i])) {
				t.Errorf("EBH(%v): row %d rejected %v adjusted %g, want %v %g", tc.es, i, rej[i], adj[i], tc.rejected[i], tc.adjusted[i])
			}
		}
	}
}

// TestSequentialPairs: the pairs a detectable change needs by the
// anytime-valid test are more than by the fixed-n test, and are the
// fewest whose SequentialMDE reaches it.
func TestSequentialPairs(t *testing.T) {
	for _, tc := range []struct{ spread, target float64 }{{0.01, 0.02}, {0.02, 0.02}, {0.05, 0.05}, {0.004, 0.02}} {
		n := SequentialPairs(tc.spread, tc.target, 0.05, 0.8)
		if n < MinSamples || SequentialMDE(tc.spread, n, 0.05, 0.8) > tc.target {
			t.Errorf("spread %g target %g: %d pairs", tc.spread, tc.target, n)
			continue
		}
		if n > MinSamples && SequentialMDE(tc.spread, n-1, 0.05, 0.8) <= tc.target {
			t.Errorf("spread %g target %g: %d pairs, but %d reach it", tc.spread, tc.target, n, n-1)
		}
		if fixed := Pairs(tc.spread, tc.target, 0.05, 0.8); fixed > n {
			t.Errorf("spread %g target %g: the fixed-n test needs %d pairs, more than the sequence's %d", tc.spread, tc.target, fixed, n)
		}
	}
	if SequentialPairs(0, 0.02, 0.05, 0.8) != MinSamples || SequentialPairs(math.NaN(), 0.02, 0.05, 0.8) != 0 || SequentialPairs(1, 1e-9, 0.05, 0.8) != 0 {
		t.Error("edge cases")
	}
}
