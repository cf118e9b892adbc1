package calibrate

import "github.com/ledgerbench/ledgerbench/internal/verdict"

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
	// significant at α (for a known change, in its direction).
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

// AdaptiveRounds replays ab --detect on the rounds of a and b, in order:
// each comparison takes the rounds after the previous one's, as many as
// the rule asks for, and the rounds left at the end that cannot finish a
// comparison are not used. dir is as for PairedRounds.
func AdaptiveRounds(a, b Forks, first, capRounds int, detect, alpha float64, dir int) Adaptive {
	res := Adaptive{Detect: detect, First: first, Cap: capRounds}
	ma, mb := medians(a), medians(b)
	n := min(len(ma), len(mb))
	var hits, ran, rounds int
	for pos := 0; pos+first <= n; {
		k, c, ok := stopAt(ma[pos:n], mb[pos:n], first, capRounds, detect, alpha)
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
		if c.MDE > detect {
			res.AtCap++
		}
		if found(c, alpha, dir) {
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

// stopAt returns the rounds one comparison of x and y takes under the
// rule, and its change then: 0 rounds when the plan after the first is
// refused; ok false when x and y end before the rule stops.
func stopAt(x, y []float64, first, capRounds int, detect, alpha float64) (int, verdict.Change, bool) {
	c, err := verdict.Paired(x[:first], y[:first], alpha, 0.8)
	if err != nil {
		return first, c, false
	}
	if need := verdict.Pairs(c.Spread, detect, alpha, 0.8); need == 0 || need > capRounds {
		return 0, c, true
	}
	for k := first; ; k++ {
		if k > first {
			if c, err = verdict.Paired(x[:k], y[:k], alpha, 0.8); err != nil {
				return k, c, false
			}
		}
		if c.MDE <= detect || k == capRounds {
			return k, c, true
		}
		if k == len(x) {
			return k, c, false
		}
	}
}
