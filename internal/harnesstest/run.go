package harnesstest

import (
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

// Spec selects the cases and sizes the iterations of an in-process run.
type Spec struct {
	Suite, Bench string           // as --suite and --bench
	Params       engine.Overrides // as -p
	Warmup       result.IterSpec  // zero: no warmup
	Measure      result.IterSpec
}

// Run runs the selection in process (no forks) from harness.Default and
// returns its cases; it stops the test on a run error or on the first
// failed case.
func Run(t testing.TB, s Spec) []*result.CaseResult {
	t.Helper()
	o := engine.DefaultOptions()
	o.Suite, o.Bench, o.Forks = s.Suite, s.Bench, 0
	o.Params = s.Params
	o.Warmup, o.Measure = s.Warmup, s.Measure
	cases, err := o.Plan(harness.Default)
	if err != nil {
		t.Fatal(err)
	}
	run, err := (&engine.Runner{}).Run(t.Context(), o, cases)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range run.Cases {
		if len(c.Failures) > 0 {
			t.Fatalf("%s: %v", c.Case.Name(), c.Failures[0])
		}
	}
	return run.Cases
}
