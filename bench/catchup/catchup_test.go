package catchup

import (
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
)

func BenchmarkCatchUp(b *testing.B) { harness.RunDefault(b, Family+"/CatchUp") }

func TestCatchUpRuns(t *testing.T) {
	o := harness.DefaultOptions()
	o.Suite, o.Bench, o.Forks = "cache", "^BenchmarkCatchUp$", 0
	o.Warmup = harness.IterSpec{}
	o.Measure = harness.IterSpec{Count: 2, Ops: 300}
	run, err := (&harness.Runner{Registry: harness.Default}).Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range run.Cases {
		if len(c.Failures) > 0 || len(c.Iterations) != 2 || len(c.Iterations[0].Ops) != 2 {
			t.Fatalf("%s: %v", c.Case.Name(), c.Failures)
		}
	}
}
