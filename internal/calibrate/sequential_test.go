package calibrate

import (
	"math/rand/v2"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness/verdict"
	"github.com/ledgerbench/ledgerbench/internal/ab"
)

// The replay of ab --until-decided on a simulated suite: an unchanged
// row, a −50 % row and a +5 % row, a round's ratio spreading about 1 %.
// The −50 % row is decided by its 4th round, the unchanged one is never
// called changed more often than α allows, every decided row stops
// getting rounds, and the comparisons use each round at most once.
func TestSequentialReplay(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const rounds = 1200
	same, sameB := duet(rng, rounds, 0.02, 0.007, 1)
	half, halfB := duet(rng, rounds, 0.02, 0.007, 0.5)
	five, fiveB := duet(rng, rounds, 0.02, 0.007, 1.05)
	cases := []Case{{Name: "same", A: same, B: sameB}, {Name: "half", A: half, B: halfB, Dir: -1, Change: -0.5},
		{Name: "five", A: five, B: fiveB, Dir: 1, Change: 0.05}}
	s := SequentialRounds(cases, verdict.MinSamples, 40, ab.Verdicts(0.05, 1, true))
	if s.Comparisons < 30 {
		t.Fatalf("%d comparisons of %d rounds", s.Comparisons, rounds)
	}
	r := s.Rows
	if r[0].Changed.Hits > s.Comparisons/10 || r[0].Same == 0 {
		t.Errorf("unchanged row: changed in %d, same in %d of %d", r[0].Changed.Hits, r[0].Same, s.Comparisons)
	}
	if r[1].Changed.Hits != s.Comparisons || r[1].MostRounds > 4 {
		t.Errorf("−50 %%: changed in %d of %d, at most %d rounds", r[1].Changed.Hits, s.Comparisons, r[1].MostRounds)
	}
	if r[2].Changed.Rate < 0.9 || r[2].FixedRounds == 0 {
		t.Errorf("+5 %%: changed in %.2f, fixed design %d rounds", r[2].Changed.Rate, r[2].FixedRounds)
	}
	var used float64
	for _, row := range r {
		used = max(used, row.MeanRounds)
		if row.MostRounds > 40 {
			t.Errorf("%s took %d rounds, past the cap", row.Name, row.MostRounds)
		}
	}
	if used*float64(s.Comparisons) > rounds {
		t.Errorf("%d comparisons of up to %.1f rounds used more than the %d rounds", s.Comparisons, used, rounds)
	}
	t.Logf("%d comparisons; same: changed %v same %d, rounds %.1f; half: %.1f; five: changed %.2f in %.1f rounds, fixed %d",
		s.Comparisons, r[0].Changed.Hits, r[0].Same, r[0].MeanRounds, r[1].DecidedIn, r[2].Changed.Rate, r[2].DecidedIn, r[2].FixedRounds)
}
