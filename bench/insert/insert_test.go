package insert

import (
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
)

func BenchmarkInsertAtTail(b *testing.B) { harness.RunDefault(b, Family+"/InsertAtTail") }
func BenchmarkInsertFloor(b *testing.B)  { harness.RunDefault(b, Family+"/InsertFloor") }
func BenchmarkInsertNoop(b *testing.B)   { harness.RunDefault(b, Family+"/InsertNoop") }

// TestInsertAtTailRuns runs both implementations briefly in process.
func TestInsertAtTailRuns(t *testing.T) {
	o := harness.DefaultOptions()
	o.Suite, o.Bench, o.Forks = "cache", "InsertAtTail", 0
	o.Params = harness.Overrides{"cachedEntries": {"1000"}}
	o.Warmup = harness.IterSpec{}
	o.Measure = harness.IterSpec{Count: 1, Ops: 3000}
	run, err := (&harness.Runner{Registry: harness.Default}).Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Cases) != 2 {
		t.Fatalf("%d cases", len(run.Cases))
	}
	for _, c := range run.Cases {
		if len(c.Failures) > 0 || c.Iterations[0].Total.Ops != 3000 {
			t.Fatalf("%s: %v", c.Case.Name(), c.Failures)
		}
	}
}
