package calibrate

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/harness/result"
)

// Case is one benchmark's rounds on the two sides: round i is fork i of
// A and of B.
type Case struct {
	Name string
	A, B Forks
	// Dir and Change are a known change's direction (1 slower, -1
	// faster) and size (0.02); 0 in an A/A.
	Dir    int
	Change float64
}

// Decide decides one comparison of rounds [lo, hi) of every case as ab
// decides its rows: it writes those rounds as an A/B file (the results
// writer of every command, each round a fork of each side, A as the
// baseline) and reads the file back through compare.BuildData with
// compare.ABOptions, the function that decides the rows of ab, bisect,
// compare and the run's tables. The cases' p-values go through the
// Benjamini–Hochberg procedure together, as a suite's do in ab. It
// returns the sec/op decision of each case, in order; a case whose file
// had no comparison (no round on a side) has nil.
func Decide(cases []Case, lo, hi int, o compare.Options) ([]*compare.Decision, error) {
	his := make([]int, len(cases))
	for i := range his {
		his[i] = hi
	}
	return decideEach(cases, lo, his, o)
}

// decideEach is Decide with an end of its own for each case: rounds
// [lo, his[i]) of case i, as a comparison in which some rows stopped
// getting rounds before others.
func decideEach(cases []Case, lo int, his []int, o compare.Options) ([]*compare.Decision, error) {
	var file bytes.Buffer
	if err := write(&file, cases, lo, his); err != nil {
		return nil, err
	}
	ts, err := compare.BuildData("calibrate.txt", file.Bytes(), o)
	if err != nil {
		return nil, err
	}
	out := make([]*compare.Decision, len(cases))
	for _, t := range ts.Tables {
		if t.Unit != "sec/op" || len(t.Cols) < 2 {
			continue
		}
		for _, row := range t.Rows {
			var i int
			if _, err := fmt.Sscanf(row.StringValues(), "Case%d", &i); err != nil || i < 0 || i >= len(cases) {
				return nil, fmt.Errorf("calibrate: row %q of its own file", row.StringValues())
			}
			out[i] = t.Decision(row, t.Cols[1])
		}
	}
	return out, nil
}

// The sides of a calibration's comparison file, as ab names them.
const (
	baseline   = "baseline"
	experiment = "experiment"
)

// write writes rounds [lo, his[i]) of each case i as an A/B file: case
// i is BenchmarkCase<i>, its scores ns/op.
func write(w *bytes.Buffer, cases []Case, lo int, his []int) error {
	var sides []report.Side
	for s, name := range []string{baseline, experiment} {
		run := &result.Run{Side: name, Config: result.Config{Forks: slices.Max(his) - lo}}
		for i, c := range cases {
			fs := [2]Forks{c.A, c.B}[s]
			cr := &result.CaseResult{Case: result.Case{Benchmark: fmt.Sprintf("BenchmarkCase%d", i)}, Mode: result.AverageTime}
			for r := lo; r < min(his[i], len(fs)); r++ {
				for k, v := range fs[r] {
					cr.Iterations = append(cr.Iterations, result.Iteration{Fork: r + 1, Index: k, Total: result.OpStats{Workers: 1, Ops: 1, NsPerOp: v}})
				}
			}
			run.Cases = append(run.Cases, cr)
		}
		sides = append(sides, report.Side{Header: report.Header{Command: "calibrate", Toolchain: name, HostPinned: "yes"}, Run: run})
	}
	return report.WriteSides(w, sides)
}

// decideOne is Decide of one case: its sec/op decision, nil when there
// is none (no round on a side).
func decideOne(a, b Forks, lo, hi int, o compare.Options) *compare.Decision {
	ds, err := Decide([]Case{{A: a, B: b}}, lo, hi, o)
	if err != nil {
		return nil
	}
	return ds[0]
}

// Rounds are two sides' measured scores of one case by round: fork n of
// each side ran in round n. Only the rounds both sides have are kept (a
// failed fork leaves its round out of both), in fork order, so the i-th
// fork of each side is one round.
func Rounds(a, b *result.CaseResult) (Forks, Forks) {
	x, y := a.ScoresByFork(), b.ScoresByFork()
	var forks []int
	for f := range x {
		if _, ok := y[f]; ok {
			forks = append(forks, f)
		}
	}
	slices.Sort(forks)
	var fa, fb Forks
	for _, f := range forks {
		fa, fb = append(fa, x[f]), append(fb, y[f])
	}
	return fa, fb
}
