package insert

import (
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/harnesstest"
)

func BenchmarkInsertAtTail(b *testing.B) { harness.RunDefault(b, Family+"/InsertAtTail") }
func BenchmarkInsertFloor(b *testing.B)  { harness.RunDefault(b, Family+"/InsertFloor") }
func BenchmarkInsertNoop(b *testing.B)   { harness.RunDefault(b, Family+"/InsertNoop") }

// TestInsertAtTailRuns runs both implementations briefly in process.
func TestInsertAtTailRuns(t *testing.T) {
	cases := harnesstest.Run(t, harnesstest.Spec{Suite: "cache", Bench: "InsertAtTail",
		Params:  engine.Overrides{"cachedEntries": {"1000"}},
		Measure: result.IterSpec{Count: 1, Ops: 3000}})
	if len(cases) != 2 {
		t.Fatalf("%d cases", len(cases))
	}
	for _, c := range cases {
		if c.Iterations[0].Total.Ops != 3000 {
			t.Fatalf("%s: %d ops, want 3000", c.Case.Name(), c.Iterations[0].Total.Ops)
		}
	}
}
