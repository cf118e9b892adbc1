package calibrate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// sim draws forks of iters iterations: each fork's level is drawn once
// (sdFork), each iteration adds sdIter; scale multiplies the level.
func sim(rng *rand.Rand, forks, iters int, sdFork, sdIter, scale float64) Forks {
	out := make(Forks, forks)
	for f := range out {
		level := 100 * scale * (1 + sdFork*rng.NormFloat64())
		for range iters {
			out[f] = append(out[f], level*(1+sdIter*rng.NormFloat64()))
		}
	}
	return out
}

func TestAAWithAForkEffect(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a, b := sim(rng, 1000, 5, 0.03, 0.003, 1), sim(rng, 1000, 5, 0.03, 0.003, 1)
	r := AA(a, b, 5, 0.05)
	if r.Fork.N != 200 || r.Iteration.N != 200 {
		t.Fatalf("%d and %d comparisons, want 200", r.Fork.N, r.Iteration.N)
	}
	// The fork-level test holds α (its interval covers 0.05 or lies
	// below); the iteration-level test, fooled by the forks' levels, not.
	if r.Fork.Lo > 0.05 || r.Fork.Rate > 0.08 {
		t.Errorf("fork-level false-positive rate %.3f [%.3f, %.3f]", r.Fork.Rate, r.Fork.Lo, r.Fork.Hi)
	}
	if r.Iteration.Lo < 0.1 {
		t.Errorf("iteration-level false-positive rate %.3f [%.3f, %.3f]: no excess", r.Iteration.Rate, r.Iteration.Lo, r.Iteration.Hi)
	}
	// 3 % forks, 5 a side: (1.96 + 0.84) × 3 % × √(2/5) / √0.955 ≈ 5.4 %.
	if math.Abs(r.ForkCV-0.03) > 0.005 || math.Abs(r.MDE-0.054) > 0.005 {
		t.Errorf("fork CV %.4f, MDE %.4f", r.ForkCV, r.MDE)
	}
}

func TestDetectAKnownChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	base, slow := sim(rng, 1000, 5, 0.01, 0.003, 1), sim(rng, 1000, 5, 0.01, 0.003, 1.05)
	// 5 % against forks that spread 1 %: 3 forks a side cannot reach
	// p < 0.05 at all (the test's smallest p is 0.1); 5 nearly always do.
	if r := Detect(base, slow, 3, 0.05); r.Hits != 0 {
		t.Errorf("3 forks a side: %d detections, want 0 (unreachable α)", r.Hits)
	}
	if r := Detect(base, slow, 5, 0.05); r.Rate < 0.95 {
		t.Errorf("5 forks a side detect 5 %% in %.2f of comparisons", r.Rate)
	}
}

func TestClopperPearson(t *testing.T) {
	// Known values: 0 of 10 → [0, 0.3085]; 5 of 10 → [0.1871, 0.8129].
	for _, tc := range []struct {
		k, n   int
		lo, hi float64
	}{{0, 10, 0, 0.3085}, {5, 10, 0.1871, 0.8129}, {10, 10, 0.6915, 1}} {
		lo, hi := ClopperPearson(tc.k, tc.n, 0.95)
		if math.Abs(lo-tc.lo) > 1e-4 || math.Abs(hi-tc.hi) > 1e-4 {
			t.Errorf("ClopperPearson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", tc.k, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
}

func TestNightlyRateOnFlatForks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	r := NightlyRate(sim(rng, 900, 3, 0.03, 0.003, 1), 3, 30)
	if r.N != 10 {
		t.Fatalf("%d series, want 10 (900 forks, 3 a night, 30 nights a series)", r.N)
	}
	if r.Hits > 1 {
		t.Errorf("%d of %d flat series alarmed", r.Hits, r.N)
	}
}
