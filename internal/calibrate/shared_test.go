package calibrate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// iterations draws rounds of one fork a side, each of iters iterations
// whose times share a disturbance of sdShared at every instant and have
// their own noise of sdOwn; every fork of side A has its own level
// (offset, uniform in ±offset), which the measure must remove.
func iterations(rng *rand.Rand, rounds, iters int, sdShared, sdOwn, offset float64) (a, b Forks) {
	for range rounds {
		levelA := 1 + offset*(2*rng.Float64()-1)
		var fa, fb []float64
		for range iters {
			host := math.Exp(sdShared * rng.NormFloat64())
			fa = append(fa, 100*levelA*host*math.Exp(sdOwn*rng.NormFloat64()))
			fb = append(fb, 102*host*math.Exp(sdOwn*rng.NormFloat64()))
		}
		a, b = append(a, fa), append(b, fb)
	}
	return a, b
}

func TestSharedNoiseKnownAnswers(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name               string
		sdShared, sdOwn    float64
		corrLo, corrHi     float64
		spreadLo, spreadHi float64
	}{
		// Var(shared) = Var(own): half of each side's variance is shared.
		{"half shared", 0.01, 0.01, 0.45, 0.55, 0.0135, 0.0148},
		{"none shared", 0, 0.02, -0.06, 0.06, 0.019, 0.021},
		{"all shared", 0.02, 0, 0.999, 1.0001, 0.019, 0.021},
	} {
		// 600 rounds of 5 iterations: 3000 pairs, a correlation's
		// standard error about 0.018; forks of side A at levels ±20 %.
		a, b := iterations(rng, 600, 5, tc.sdShared, tc.sdOwn, 0.2)
		s := SharedNoise(a, b)
		if s.N != 3000 {
			t.Errorf("%s: %d pairs, want 3000", tc.name, s.N)
		}
		if s.Corr < tc.corrLo || s.Corr > tc.corrHi {
			t.Errorf("%s: correlation %.3f, want in [%g, %g]", tc.name, s.Corr, tc.corrLo, tc.corrHi)
		}
		// Each side's spread is sqrt(sdShared² + sdOwn²), whatever the
		// level of its forks.
		for side, sp := range []float64{s.SpreadA, s.SpreadB} {
			if sp < tc.spreadLo || sp > tc.spreadHi {
				t.Errorf("%s: side %d spreads %.4f, want in [%g, %g]", tc.name, side, sp, tc.spreadLo, tc.spreadHi)
			}
		}
	}
}

// A fork with a value that is not positive is left out whole; a round
// of one iteration has no deviation; too few pairs give NaN.
func TestSharedNoiseLeavesOutWhatItCannotUse(t *testing.T) {
	a := Forks{{1, 2, 4}, {1, 0, 3}, {5}, {2, 4}}
	b := Forks{{2, 4, 8}, {1, 1, 1}, {6}, {4, 8}, {1, 2}}
	s := SharedNoise(a, b)
	if s.N != 5 { // rounds 1 and 4: 3 + 2 pairs
		t.Fatalf("%d pairs, want 5", s.N)
	}
	if math.Abs(s.Corr-1) > 1e-12 {
		t.Errorf("b is twice a at every iteration: correlation %v, want 1", s.Corr)
	}
	if s := SharedNoise(Forks{{1, 2}}, Forks{{2, 1}}); s != (Shared{N: 2}) {
		t.Errorf("two pairs: %+v, want nothing measured", s)
	}
	if s := SharedNoise(Forks{{3, 3, 3}}, Forks{{1, 2, 4}}); s.Corr != 0 || s.SpreadA != 0 || s.SpreadB == 0 {
		t.Errorf("a side without spread: %+v, want a correlation of 0 (not NaN)", s)
	}
}
