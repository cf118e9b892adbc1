package benchctl

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness/compare"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/calibrate"
)

// calibrateAgreesWithAB checks, on the rounds recorded in an A/B file,
// that calibrate's decision of all of them (read back as calibrate
// --from reads them, then calibrate.Decide) is the decision ab's table
// shows for the same file (compare.Build under compare.ABOptions).
func calibrateAgreesWithAB(t *testing.T, path string) {
	t.Helper()
	o := compare.ABOptions(0.05, compare.DefaultMinChange)
	ts, err := compare.Build([]string{path}, o)
	if err != nil {
		t.Fatal(err)
	}
	var want []*compare.Decision
	for _, tab := range ts.Tables {
		if tab.Unit == "sec/op" {
			for _, row := range tab.Rows {
				want = append(want, tab.Decision(row, tab.Cols[1]))
			}
		}
	}
	runs, _, _, err := calibrate.ReadRuns(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []calibrate.Case
	rounds := 0
	for i, cr := range runs[0].Cases {
		a, b := calibrate.Rounds(cr, runs[1].Cases[i])
		cases = append(cases, calibrate.Case{Name: cr.Case.Name(), A: a, B: b})
		rounds = max(rounds, len(a))
	}
	got, err := calibrate.Decide(cases, 0, rounds, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("%d decisions by calibrate, %d by ab's table", len(got), len(want))
	}
	close := func(x, y float64) bool { return x == y || math.Abs(x-y) <= 1e-9*math.Abs(y) }
	for i := range want {
		g, w := got[i], want[i]
		if g == nil || w == nil {
			t.Fatalf("case %d: calibrate %+v, ab %+v", i, g, w)
		}
		if g.Verdict != w.Verdict || g.Change.N != w.Change.N || g.Change.Paired != w.Change.Paired ||
			!close(g.Change.Ratio, w.Change.Ratio) || !close(g.Change.Lo, w.Change.Lo) || !close(g.Change.Hi, w.Change.Hi) || !close(g.Q, w.Q) {
			t.Errorf("%s: calibrate decided %v %+v (q %g), ab's table %v %+v (q %g)", cases[i].Name, g.Verdict, g.Change, g.Q, w.Verdict, w.Change, w.Q)
		}
	}
}

// TestCalibrateDecidesAsAB: an A/B file of two cases whose rounds share
// a host effect, with a fork of one side missing (it failed), so that
// the rounds of the two sides are not the same forks by position.
// calibrate's decision of the recorded rounds is ab's.
func TestCalibrateDecidesAsAB(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	var sides []report.Side
	levels := make([][]float64, 8)
	for r := range levels {
		levels[r] = []float64{1 + 0.1*rng.NormFloat64(), 1 + 0.1*rng.NormFloat64()}
	}
	for s, name := range []string{"baseline", "experiment"} {
		run := &result.Run{Side: name, Config: result.Config{Forks: 8}}
		for c, shift := range []float64{1, 1.04} {
			cr := &result.CaseResult{Case: result.Case{Benchmark: []string{"BenchmarkP", "BenchmarkQ"}[c]}, Mode: result.AverageTime}
			for r := range 8 {
				if s == 1 && c == 0 && r == 2 {
					continue // the experiment's fork 3 of P failed
				}
				for k := range 3 {
					ns := 1000 * levels[r][c] * (1 + 0.01*rng.NormFloat64())
					if s == 1 {
						ns *= shift
					}
					cr.Iterations = append(cr.Iterations, result.Iteration{Fork: r + 1, Index: k, Total: result.OpStats{Workers: 1, Ops: 1000, NsPerOp: ns}})
				}
			}
			run.Cases = append(run.Cases, cr)
		}
		sides = append(sides, report.Side{Header: report.Header{Command: "ab", Toolchain: name, HostPinned: "yes"}, Run: run})
	}
	var b bytes.Buffer
	if err := report.WriteSides(&b, sides); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ab.txt")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	calibrateAgreesWithAB(t, path)
}
