package eviction

import (
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
)

func BenchmarkInsertAndEvict(b *testing.B) { harness.RunDefault(b, Family+"/InsertAndEvict") }

func TestInsertAndEvictRuns(t *testing.T) {
	o := harness.DefaultOptions()
	o.Suite, o.Bench, o.Forks = "cache", "InsertAndEvict", 0
	o.Params = harness.Overrides{"batchSize": {"100"}}
	o.Warmup = harness.IterSpec{}
	o.Measure = harness.IterSpec{Count: 1, Ops: 50}
	run, err := (&harness.Runner{Registry: harness.Default}).Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Cases) != 4 {
		t.Fatalf("%d cases", len(run.Cases))
	}
	for _, c := range run.Cases {
		if len(c.Failures) > 0 {
			t.Fatalf("%s: %v", c.Case.Name(), c.Failures[0])
		}
	}
}

func BenchmarkEvictAll(b *testing.B) { harness.RunDefault(b, Family+"/EvictAll") }

func TestEvictAllRuns(t *testing.T) {
	o := harness.DefaultOptions()
	o.Suite, o.Bench, o.Forks = "cache", "EvictAll", 0
	o.Params = harness.Overrides{"entries": {"2000"}}
	o.Warmup = harness.IterSpec{}
	o.Measure = harness.IterSpec{Count: 1, Ops: 3}
	run, err := (&harness.Runner{Registry: harness.Default}).Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Cases) != 4 {
		t.Fatalf("%d cases", len(run.Cases))
	}
	for _, c := range run.Cases {
		if len(c.Failures) > 0 || c.Iterations[0].Total.Ops != 3 {
			t.Fatalf("%s: %v", c.Case.Name(), c.Failures)
		}
	}
}
