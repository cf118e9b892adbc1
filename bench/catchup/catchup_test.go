package catchup

import (
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/harnesstest"
)

func BenchmarkCatchUp(b *testing.B) { harness.RunDefault(b, Family+"/CatchUp") }

func TestCatchUpRuns(t *testing.T) {
	cases := harnesstest.Run(t, harnesstest.Spec{Suite: "cache", Bench: "^BenchmarkCatchUp$",
		Measure: harness.IterSpec{Count: 2, Ops: 300}})
	for _, c := range cases {
		if len(c.Iterations) != 2 || len(c.Iterations[0].Ops) != 2 {
			t.Fatalf("%s: %d iterations, %d ops in the first, want 2 and 2", c.Case.Name(), len(c.Iterations), len(c.Iterations[0].Ops))
		}
	}
}
