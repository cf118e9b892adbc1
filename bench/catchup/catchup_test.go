package catchup

import (
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/harnesstest"
)

func BenchmarkCatchUp(b *testing.B) { harness.RunDefault(b, Family+"/CatchUp") }

func TestCatchUpRuns(t *testing.T) {
	cases := harnesstest.Run(t, harnesstest.Spec{Suite: "cache", Bench: "^BenchmarkCatchUp$",
		Measure: result.IterSpec{Count: 2, Ops: 300}})
	for _, c := range cases {
		if len(c.Iterations) != 2 || len(c.Iterations[0].Ops) != 2 {
			t.Fatalf("%s: %d iterations, %d ops in the first, want 2 and 2", c.Case.Name(), len(c.Iterations), len(c.Iterations[0].Ops))
		}
	}
}

func BenchmarkCatchUpFloor(b *testing.B) { harness.RunDefault(b, Family+"/CatchUpFloor") }

// TestCatchUpFloorRuns: the floor group reports both ops, and each op
// allocates its entries: one per tail insert, a hundred per run.
func TestCatchUpFloorRuns(t *testing.T) {
	cases := harnesstest.Run(t, harnesstest.Spec{Suite: "cache", Bench: "^BenchmarkCatchUpFloor$",
		Measure: result.IterSpec{Count: 1, Ops: 500}})
	if len(cases) != 1 {
		t.Fatalf("%d cases", len(cases))
	}
	it := cases[0].Iterations[0]
	if len(it.Ops) != 2 || it.Ops[0].Ops == 0 || it.Ops[1].Ops == 0 {
		t.Fatalf("ops %+v", it.Ops)
	}
	if per := float64(it.Allocs) / float64(it.Executed); per < 1 || per > run {
		t.Errorf("%.2f allocs per executed op, want between 1 (tail insert) and %d (run)", per, run)
	}
}
