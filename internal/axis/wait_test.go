package axis

import (
	"bytes"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/harness/result"
)

// waitRun is a run of four benchmarks over three forks: three compared
// along impl (baseline "old"), whose per-fork ratios of new over old are
// given, and a floor without the axis.
func waitRun(t *testing.T) ([]result.Case, []byte) {
	t.Helper()
	ratios := map[string][]float64{
		"BenchmarkDecided": {0.500, 0.501, 0.499}, // −50 %, tight: changed
		"BenchmarkLarge":   {0.30, 0.90, 0.60},    // about −40 %, too wide to decide
		"BenchmarkSmall":   {0.70, 1.35, 1.00},    // about 0 %, too wide to decide
		"BenchmarkFloor":   {1, 1, 1},             // not compared
	}
	run := &result.Run{Side: "run", Config: result.Config{Forks: 3}}
	var cases []result.Case
	for _, name := range []string{"BenchmarkDecided", "BenchmarkLarge", "BenchmarkSmall", "BenchmarkFloor"} {
		impls := []string{"old", "new"}
		if name == "BenchmarkFloor" {
			impls = []string{""}
		}
		for _, impl := range impls {
			c := result.Case{Benchmark: name, ID: "w/" + name, Family: "w", Pkg: "example.com/w"}
			if impl != "" {
				c.Params, c.Axis, c.Baseline = result.Params{{Name: "impl", Value: impl}}, "impl", "old"
			}
			cr := &result.CaseResult{Case: c, Mode: result.AverageTime}
			for f, r := range ratios[name] {
				ns := 1000.0 * (1 + 0.1*float64(f)) // forks differ; pairs cancel it
				if impl == "new" {
					ns *= r
				}
				for k := range 3 {
					cr.Iterations = append(cr.Iterations, result.Iteration{Fork: f + 1, Index: k, Total: result.OpStats{Workers: 1, Ops: 1000, NsPerOp: ns}})
				}
			}
			run.Cases = append(run.Cases, cr)
			cases = append(cases, c)
		}
	}
	var b bytes.Buffer
	if err := report.WriteBenchfmt(&b, report.Header{Command: "run"}, run); err != nil {
		t.Fatal(err)
	}
	return cases, b.Bytes()
}

// TestQuickWaitsForLargeChanges: run --quick's rule gives more forks to
// the cases of a row whose change looks large and is undecided, and to
// no other; waiting for every row, the small undecided one is waited for
// too.
func TestQuickWaitsForLargeChanges(t *testing.T) {
	cases, data := waitRun(t)
	for _, tc := range []struct {
		over float64
		want map[string]Look
	}{
		{QuickOver, map[string]Look{
			"BenchmarkDecided/impl=old": Decided, "BenchmarkDecided/impl=new": Decided,
			"BenchmarkLarge/impl=old": Open, "BenchmarkLarge/impl=new": Open,
			"BenchmarkSmall/impl=old": Small, "BenchmarkSmall/impl=new": Small,
			"BenchmarkFloor": Decided, "BenchmarkUnknown": Open}},
		{0, map[string]Look{
			"BenchmarkDecided/impl=old": Decided, "BenchmarkDecided/impl=new": Decided,
			"BenchmarkLarge/impl=old": Open, "BenchmarkLarge/impl=new": Open,
			"BenchmarkSmall/impl=old": Open, "BenchmarkSmall/impl=new": Open,
			"BenchmarkFloor": Decided}},
	} {
		w := NewWait(cases, tc.over)
		look, err := w.Look(data)
		if err != nil {
			t.Fatal(err)
		}
		decide, err := w.Decide(data)
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range tc.want {
			got, d := look(name)
			if got != want {
				t.Errorf("over %g: %s looks %d, want %d (decision %+v)", tc.over, name, got, want, d)
			}
			if decide(name) != (want != Open) {
				t.Errorf("over %g: %s decided %v, want %v", tc.over, name, decide(name), want != Open)
			}
		}
		_, d := look("BenchmarkSmall/impl=new")
		if d == nil || d.Change.N != 3 {
			t.Fatalf("the small row's decision %+v: want its change over 3 pairs", d)
		}
	}
}
