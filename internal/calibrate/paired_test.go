package calibrate

import (
	"math/rand/v2"
	"testing"
)

// duet draws rounds of one fork a side whose levels share the round's
// host disturbance (sdHost, the same factor on both sides) and have their
// own noise (sdOwn); the experiment is scale times the baseline.
func duet(rng *rand.Rand, rounds int, sdHost, sdOwn, scale float64) (a, b Forks) {
	for range rounds {
		host := 1 + sdHost*rng.NormFloat64()
		a = append(a, []float64{100 * host * (1 + sdOwn*rng.NormFloat64())})
		b = append(b, []float64{100 * scale * host * (1 + sdOwn*rng.NormFloat64())})
	}
	return a, b
}

// A shared disturbance of 5 % per round hides a 2 % change from the
// unpaired test and not from the paired one, which holds α when nothing
// changed.
func TestPairingCancelsTheSharedDisturbance(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a, b := duet(rng, 2000, 0.05, 0.005, 1.02)
	r := PairedRounds(a, b, 10, abOpts, +1)
	if r.Hits.N != 200 || r.Hits.Rate < 0.99 {
		t.Errorf("paired: found %.3f of %d comparisons, want ≥ 0.99", r.Hits.Rate, r.Hits.N)
	}
	if r.Unpaired.Rate > 0.3 {
		t.Errorf("unpaired: found %.3f; the disturbance should hide most", r.Unpaired.Rate)
	}
	if r.Width*5 > r.UnpairedWidth {
		t.Errorf("interval widths: paired %.4f, unpaired %.4f; want the paired five times narrower", r.Width, r.UnpairedWidth)
	}
	a, b = duet(rng, 2000, 0.05, 0.005, 1)
	aa := PairedRounds(a, b, 10, abOpts, 0)
	if aa.Hits.Lo > 0.05 || aa.Hits.Rate > 0.09 {
		t.Errorf("A/A false positives %.3f [%.3f, %.3f]", aa.Hits.Rate, aa.Hits.Lo, aa.Hits.Hi)
	}
	// A change found in the wrong direction is not a detection.
	if wrong := PairedRounds(a, b, 10, abOpts, -1); wrong.Hits.Hits > aa.Hits.Hits {
		t.Errorf("one direction found more than both: %d > %d", wrong.Hits.Hits, aa.Hits.Hits)
	}
	if s := PairSpread(a, b); s < 0.005 || s > 0.01 {
		t.Errorf("pair spread %.4f, want √2 × 0.5 %% ≈ 0.71 %%", s)
	}
}

// Twenty unchanged cases: compared row by row at α, most suite A/As
// find something (1 - 0.95^20 ≈ 64 %); as ab decides them (the
// Benjamini–Hochberg procedure, then the margin), about α or fewer do,
// and fewer still exit 1 (a change for the worse).
func TestSuiteFalseAlarmsWithAndWithoutFDR(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var cases []Case
	for range 20 {
		a, b := duet(rng, 1000, 0.03, 0.01, 1)
		cases = append(cases, Case{A: a, B: b})
	}
	r := Suite(cases, 5, abOpts)
	if r.PerRow.N != 200 || r.PerRow.Rate < 0.5 || r.PerRow.Rate > 0.8 {
		t.Errorf("per-row suite false alarms %.3f of %d, want about 0.64", r.PerRow.Rate, r.PerRow.N)
	}
	if r.Changed.Lo > 0.05 || r.Changed.Rate > 0.1 {
		t.Errorf("suite A/As called changed %.3f [%.3f, %.3f], want about 0.05 or less", r.Changed.Rate, r.Changed.Lo, r.Changed.Hi)
	}
	if r.Exit.Hits > r.Changed.Hits {
		t.Errorf("exit 1 in %d comparisons, changed in only %d", r.Exit.Hits, r.Changed.Hits)
	}
}
