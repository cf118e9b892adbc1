package calibrate

import (
	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
)

// Adaptive is what comparisons that stop as ab --detect stops found:
// each starts with First rounds; when the rounds needed for the
// detectable change, planned from their spread, exceed Cap, ab refuses
// (exit 2, no verdict); otherwise rounds are added one at a time until
// the comparison's detectable change at 80 % power is at most Detect, or
// Cap rounds are reached. The rule looks at the spread of the rounds,
// never at their change; this measures what it does to the error rates.
type Adaptive struct {
	Detect     float64
	First, Cap int
	// Hits counts, of the comparisons that ran (Refused excluded), those
	// ab's verdict called changed (for a known change, in its
	// direction).
	Hits Rate
	// Refused counts the comparisons whose plan needed more than Cap
	// rounds, and AtCap those that reached Cap without the detectable
	// change.
	Refused, AtCap int
	// MeanRounds and MostRounds are the rounds the comparisons that ran
	// took.
	MeanRounds float64
	MostRounds int
}

// AdaptiveRounds replays ab --detect on the rounds of a and b, in order,
// each comparison decided as ab decides a row ([Decide], under o): each
// comparison takes the rounds after the previous one's, as many as the
// rule asks for, and the rounds left at the end that cannot finish a
// comparison are not used. dir is as for PairedRounds.
func AdaptiveRounds(a, b Forks, first, capRounds int, detect float64, o compare.Options, dir int) Adaptive {
	res := Adaptive{Detect: detect, First: first, Cap: capRounds}
	n := min(len(a), len(b))
	var hits, ran, rounds int
	for pos := 0; pos+first <= n; {
		k, d, ok := stopAt(a, b, pos, n, first, capRounds, detect, o)
		switch {
		case k == 0: // refused after the first rounds
			res.Refused++
			pos += first
			continue
		case !ok:
			pos = n // the data ran out before the rule stopped
			continue
		}
		ran++
		rounds += k
		res.MostRounds = max(res.MostRounds, k)
		if d.Change.MDE > detect {
			res.AtCap++
		}
		if found(d, dir) {
			hits++
		}
		pos += k
	}
	res.Hits = rate(hits, ran)
	if ran > 0 {
		res.MeanRounds = float64(rounds) / float64(ran)
	}
	return res
}

// stopAt returns the rounds one comparison of the rounds of a and b from
// pos (up to n) takes under the rule, and its decision then: 0 rounds
// when the plan after the first is refused; ok false when the rounds end
// before the rule stops (or a decision cannot be made).
func stopAt(a, b Forks, pos, n, first, capRounds int, detect float64, o compare.Options) (int, *compare.Decision, bool) {
	d := decideOne(a, b, pos, pos+first, o)
	if d == nil || d.Err != nil {
		return first, d, false
	}
	if need := verdict.SequentialPairs(d.Change.Spread, detect, o.Alpha, compare.Power); need == 0 || need > capRounds {
		return 0, d, true
	}
	for k := first; ; k++ {
		if k > first {
			if d = decideOne(a, b, pos, pos+k, o); d == nil || d.Err != nil {
				return k, d, false
			}
		}
		if d.Change.MDE <= detect || k == capRounds {
			return k, d, true
		}
		if pos+k == n {
			return k, d, false
		}
	}
}
