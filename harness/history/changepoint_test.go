package history

import (
	"math/rand/v2"
	"testing"
)

func noisy(n int, seed uint64, level func(i int) float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 9))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = level(i) * (1 + 0.02*r.NormFloat64())
	}
	return xs
}

func TestChangePointFindsAStep(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		xs := noisy(100, seed, func(i int) float64 {
			if i >= 60 {
				return 110
			}
			return 100
		})
		cps := ChangePoints(xs, CPDOptions{Seed: seed})
		if len(cps) != 1 || cps[0] < 58 || cps[0] > 63 {
			t.Errorf("seed %d: change points %v, want one near 60", seed, cps)
		}
	}
}

func TestChangePointSoonAfterTheStep(t *testing.T) {
	// A step 5 points before the end of the series is found.
	xs := noisy(60, 3, func(i int) float64 {
		if i >= 55 {
			return 110
		}
		return 100
	})
	if cps := ChangePoints(xs, CPDOptions{Seed: 3}); len(cps) != 1 || cps[0] < 54 || cps[0] > 56 {
		t.Errorf("change points %v, want one at 55", cps)
	}
}

func TestNoChangePointOnAFlatSeries(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		xs := noisy(100, seed, func(int) float64 { return 100 })
		if cps := ChangePoints(xs, CPDOptions{Seed: seed}); len(cps) != 0 {
			t.Errorf("seed %d: change points %v on a flat series", seed, cps)
		}
	}
}

func TestTwoSteps(t *testing.T) {
	xs := noisy(120, 7, func(i int) float64 {
		switch {
		case i >= 80:
			return 90
		case i >= 40:
			return 110
		}
		return 100
	})
	cps := ChangePoints(xs, CPDOptions{Seed: 7})
	if len(cps) != 2 || cps[0] < 38 || cps[0] > 42 || cps[1] < 78 || cps[1] > 82 {
		t.Errorf("change points %v, want near 40 and 80", cps)
	}
}
