package history

import (
	"fmt"
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

// flat is a series of n nightly points without any change: noise of
// relative sd around 100, with an outlying run now and then (a noisy
// neighbour on the machine that night).
func flat(rng *rand.Rand, n int, sd float64) *Series {
	s := &Series{Benchmark: "BenchmarkFlat", Unit: "sec/op"}
	for i := range n {
		v := 100 * (1 + sd*rng.NormFloat64())
		if rng.IntN(20) == 0 {
			v *= 1.15
		}
		s.Points = append(s.Points, Point{Value: v, EnvID: "e", Commit: fmt.Sprint(i)})
	}
	return s
}

func TestNightlyFalseAlarmRateOnFlatSeries(t *testing.T) {
	// 500 flat series of 30 nights: a series alarms when the last
	// NewWindow nights hold a new worse shift. Measured, with a seed.
	rng := rand.New(rand.NewPCG(11, 12))
	var alarms, points, small int
	const series = 500
	for i := range series {
		s := flat(rng, 30, 0.02)
		for _, sh := range Analyze(s, CPDOptions{Seed: uint64(i)}) {
			points++
			if sh.Small {
				small++
			}
			if sh.New {
				alarms++
				break
			}
		}
	}
	rate := float64(alarms) / series
	t.Logf("flat series: %d of %d raised an alarm (%.1f %%); %d change points found, %d of them small", alarms, series, 100*rate, points, small)
	if rate > 0.02 {
		t.Errorf("nightly false-alarm rate on flat series %.3f, want ≤ 0.02", rate)
	}
}

func TestMinEffectKeepsSmallShiftsFromAlarming(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	step := func(factor float64) *Series {
		s := &Series{Benchmark: "BenchmarkStep", Unit: "sec/op"}
		for i := range 40 {
			v := 100 * (1 + 0.001*rng.NormFloat64())
			if i >= 36 {
				v *= factor
			}
			s.Points = append(s.Points, Point{Value: v, EnvID: "e"})
		}
		return s
	}
	// 10 % on 0.1 % noise: a regression. Then the same step on a series
	// whose noise is 8 %: under 3× its noise, annotated as small.
	if shs := Analyze(step(1.10), CPDOptions{Seed: 1}); len(shs) == 0 || !shs[len(shs)-1].New {
		t.Errorf("a 10 %% step on quiet nights: %+v, want a new regression", shs)
	}
	noisy := step(1.10)
	for i := range noisy.Points {
		if i%2 == 0 {
			noisy.Points[i].Value *= 1.08
		}
	}
	for _, sh := range Analyze(noisy, CPDOptions{Seed: 1, MinSize: 3}) {
		if sh.New {
			t.Errorf("a step under 3× the series' noise alarmed: %+v", sh)
		}
	}
}
