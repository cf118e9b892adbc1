package calibrate

import (
	"fmt"
	"io"
	"math"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/verdict"
)

// Sequential is what comparisons that stop as ab --until-decided stops
// found. Each comparison takes every case's rounds from where the
// previous one ended: after its first First rounds, and after every
// round from then on, all its rows are decided at once as ab decides
// them (the anytime-valid test, e-BH across the rows); a row decided
// changed or same gets no more rounds, and the comparison ends when every
// row is decided or its longest row has Cap rounds.
type Sequential struct {
	First, Cap int
	// Comparisons counts the comparisons replayed (of the whole suite),
	// and AnyChanged those in which some row's verdict was changed: in an
	// A/A, the suite-wide false positives.
	Comparisons int
	AnyChanged  Rate
	Rows        []SequentialRow
}

// SequentialRow is one case's figures over the comparisons.
type SequentialRow struct {
	Name string
	// Changed counts the comparisons whose verdict of this row was
	// changed (for a known change, in its direction); Same and Unknown
	// the others (Unknown: still undecided at Cap rounds).
	Changed       Rate
	Same, Unknown int
	// MeanRounds and MostRounds are the rounds the row took; DecidedIn is
	// the mean of those that ended changed.
	MeanRounds, DecidedIn float64
	MostRounds            int
	// FixedRounds, for a known change, is how many rounds a fixed design
	// of the fixed-n test needs, at this row's spread of a round's ratio,
	// to find the change with the power Changed shows (0: more than
	// verdict.MaxPairs, or no power to match).
	FixedRounds int `json:",omitempty"`
	// OracleRounds, for a known change, is the mean rounds of the
	// scale-free anytime-valid test told the change (OracleRounds): a
	// yardstick for ab's test, which is not told.
	OracleRounds float64 `json:",omitempty"`
}

// SequentialRounds replays ab --until-decided on the cases' rounds, in
// order, every look decided by the function that decides ab's rows (o,
// whose Sequential is set). A case's Dir is as PairedRounds' dir, and
// its Change, for a known change, the size FixedRounds is planned for.
func SequentialRounds(cases []Case, first, capRounds int, o compare.Options) Sequential {
	res := Sequential{First: first, Cap: capRounds, Rows: make([]SequentialRow, len(cases))}
	n := -1
	for _, c := range cases {
		if m := min(len(c.A), len(c.B)); n < 0 || m < n {
			n = m
		}
	}
	type tally struct{ changed, rounds, most, decidedRounds int }
	t := make([]tally, len(cases))
	anyChanged := 0
	for pos := 0; pos+first <= n; {
		ds, his, ok := untilDecided(cases, pos, n, first, capRounds, o)
		if !ok {
			break // the rounds ran out before the comparison ended
		}
		res.Comparisons++
		longest, any := 0, false
		for i, d := range ds {
			k := his[i] - pos
			longest = max(longest, k)
			t[i].rounds += k
			t[i].most = max(t[i].most, k)
			r := &res.Rows[i]
			switch {
			case found(d, cases[i].Dir):
				t[i].changed++
				t[i].decidedRounds += k
			case d.Is(verdict.Same):
				r.Same++
			default: // undecided, or changed against the known direction
				r.Unknown++
			}
			any = any || d.Is(verdict.Changed)
		}
		if any {
			anyChanged++
		}
		pos += longest
	}
	res.AnyChanged = rate(anyChanged, res.Comparisons)
	for i, c := range cases {
		r := &res.Rows[i]
		r.Name = c.Name
		r.Changed = rate(t[i].changed, res.Comparisons)
		r.MostRounds = t[i].most
		if res.Comparisons > 0 {
			r.MeanRounds = float64(t[i].rounds) / float64(res.Comparisons)
		}
		if t[i].changed > 0 {
			r.DecidedIn = float64(t[i].decidedRounds) / float64(t[i].changed)
		}
		r.yardsticks(c, first, capRounds, o.Alpha)
	}
	return res
}

// yardsticks sets, for a known change, the row's fixed design's rounds at
// the power it showed and the oracle's rounds.
func (r *SequentialRow) yardsticks(c Case, first, capRounds int, alpha float64) {
	if c.Change == 0 {
		return
	}
	if r.Changed.Rate > 0.5 {
		// The fixed design's power is capped below 1: a design for all of
		// them would need infinitely many rounds.
		power := min(r.Changed.Rate, 0.99)
		r.FixedRounds = verdict.Pairs(PairSpread(c.A, c.B), math.Abs(c.Change), alpha, power)
	}
	r.OracleRounds = OracleRounds(c, first, capRounds, alpha)
}

// untilDecided replays one comparison from round pos (of n): the
// decisions of every case when it ended and the end of each case's
// rounds; ok false when the rounds ran out first or a look could not be
// decided.
func untilDecided(cases []Case, pos, n, first, capRounds int, o compare.Options) ([]*compare.Decision, []int, bool) {
	his := make([]int, len(cases))
	for i := range his {
		his[i] = pos + first
	}
	for {
		ds, err := decideEach(cases, pos, his, o)
		if err != nil {
			return nil, nil, false
		}
		more := false
		for i, d := range ds {
			if d.Decided() {
				continue // decided: no more rounds
			}
			if his[i]-pos < capRounds {
				if his[i] == n {
					return nil, nil, false
				}
				his[i]++
				more = true
			}
		}
		if !more {
			return ds, his, true
		}
	}
}

// writeSequentialMD renders the replay of ab --until-decided.
func writeSequentialMD(w io.Writer, r *Report) {
	s := r.Sequential
	if s == nil {
		return
	}
	known := len(r.Pair) > 0
	fmt.Fprintf(w, "## Replayed as ab --until-decided\n\nThe same rounds, in order, as ab --until-decided takes them: %d rounds first, then after every round all rows are decided at once by the function that decides ab's rows (the anytime-valid t test's e-values, e-BH across the rows at %g, margin ±%g %%); a row decided changed or same gets no more rounds, and a comparison ends when all are decided or its longest row has %d rounds. %d comparisons of every row at once.\n\n",
		s.First, r.Alpha, r.MinChange, s.Cap, s.Comparisons)
	what := "changed (false positives)"
	if known {
		what = "changed in the change's direction"
	}
	fmt.Fprintf(w, "| benchmark | %s | same | undecided at %d | rounds, mean | rounds, most | rounds to changed, mean |", what, s.Cap)
	if known {
		fmt.Fprintf(w, " fixed design's rounds at that power | the oracle's rounds, mean |\n|:--|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	} else {
		fmt.Fprintf(w, "\n|:--|--:|--:|--:|--:|--:|--:|\n")
	}
	for _, row := range s.Rows {
		fmt.Fprintf(w, "| %s | %s | %d | %d | %.1f | %d | %.1f |", row.Name, pct(row.Changed), row.Same, row.Unknown, row.MeanRounds, row.MostRounds, row.DecidedIn)
		if known {
			fixed := "–"
			if row.FixedRounds > 0 {
				fixed = fmt.Sprintf("%d (%.0f %% power)", row.FixedRounds, 100*min(row.Changed.Rate, 0.99))
			}
			fmt.Fprintf(w, " %s | %.1f |", fixed, row.OracleRounds)
		}
		fmt.Fprintln(w)
	}
	if known {
		fmt.Fprintf(w, "\nThe oracle is the anytime-valid test that does not depend on the noise's scale and is told the change in hindsight (the right-Haar Bayes factor of the change over the rounds' spread, at whichever of 0.5–2 times it stopped soonest, against no change, without ab's margin): the evidence that grows fastest in expectation for a test valid whatever the machine's noise. A yardstick for a moderate change; on a large one the three first rounds bind both, and a mixture over changes can stop sooner.\n")
	} else {
		fmt.Fprintf(w, "\nThe suite as a whole: some row called changed in %s of the comparisons.\n", pct(s.AnyChanged))
	}
	fmt.Fprintln(w)
}
