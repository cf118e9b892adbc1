package calibrate

import (
	"math/rand/v2"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
	"github.com/ledgerbench/ledgerbench/internal/ab"
)

// abOpts are the options under which ab decides its rows, at its
// defaults, and seqOpts those of ab --detect and --until-decided.
var (
	abOpts  = compare.ABOptions(0.05, compare.DefaultMinChange)
	seqOpts = ab.Verdicts(0.05, compare.DefaultMinChange, true)
)

// Rounds whose ratio spreads 1.4 % need more than the first 5 to detect
// 2 %: the replay adds rounds until the detectable change is reached,
// holds α in an A/A, finds a real +3 % in most comparisons, and uses
// every round at most once.
func TestAdaptiveAddsRoundsAndHoldsAlpha(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	a, b := duet(rng, 2000, 0.03, 0.01, 1) // a round's log ratio spreads about 1.4 %
	aa := AdaptiveRounds(a, b, 5, 200, 0.02, seqOpts, 0)
	if aa.Refused != 0 || aa.AtCap != 0 {
		t.Fatalf("refused %d, at the cap %d: the cap of 200 rounds is ample", aa.Refused, aa.AtCap)
	}
	if aa.MeanRounds < 5.5 || aa.MostRounds < 10 || aa.MostRounds > 40 {
		t.Errorf("rounds: mean %.1f, most %d; want more than the first 5 on average, at most 10 to 40", aa.MeanRounds, aa.MostRounds)
	}
	if used := aa.MeanRounds * float64(aa.Hits.N); used > 2000 || used < 2000-float64(aa.MostRounds)-40 {
		t.Errorf("comparisons used %.0f rounds of 2000", used)
	}
	if aa.Hits.N < 100 || aa.Hits.Lo > 0.05 || aa.Hits.Rate > 0.08 {
		t.Errorf("A/A false positives %.3f [%.3f, %.3f] of %d", aa.Hits.Rate, aa.Hits.Lo, aa.Hits.Hi, aa.Hits.N)
	}
	a, b = duet(rng, 2000, 0.03, 0.01, 1.03)
	if found := AdaptiveRounds(a, b, 5, 200, 0.02, seqOpts, +1); found.Hits.Rate < 0.9 {
		t.Errorf("a +3 %% change found in %.3f of %d comparisons, want ≥ 0.9 at a detectable 2 %%", found.Hits.Rate, found.Hits.N)
	}
}

// When the plan after the first rounds needs more than the cap, every
// comparison is refused, as ab refuses it; a cap the rule reaches first
// counts the comparisons stopped there.
func TestAdaptiveRefusesAndCaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	a, b := duet(rng, 500, 0.03, 0.3, 1) // spreads about 40 %: 2 % needs thousands of rounds
	r := AdaptiveRounds(a, b, 5, 20, 0.02, seqOpts, 0)
	if r.Refused != 100 || r.Hits.N != 0 {
		t.Errorf("refused %d of 100, ran %d", r.Refused, r.Hits.N)
	}
	// Spread just under the plan's limit: some comparisons get to the
	// cap without the detectable change.
	a, b = duet(rng, 4000, 0.03, 0.0085, 1)
	need := verdict.SequentialPairs(PairSpread(a, b), 0.02, 0.05, 0.8)
	c := AdaptiveRounds(a, b, 5, need, 0.02, seqOpts, 0)
	if c.AtCap == 0 || c.MostRounds != need {
		t.Errorf("cap %d: %d comparisons at the cap, most rounds %d; want some at the cap", need, c.AtCap, c.MostRounds)
	}
}
