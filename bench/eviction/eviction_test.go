package eviction

import (
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/harnesstest"
)

func BenchmarkInsertAndEvict(b *testing.B) { harness.RunDefault(b, Family+"/InsertAndEvict") }

func TestInsertAndEvictRuns(t *testing.T) {
	cases := harnesstest.Run(t, harnesstest.Spec{Suite: "cache", Bench: "^BenchmarkInsertAndEvict/",
		Params:  engine.Overrides{"batchSize": {"100"}},
		Measure: result.IterSpec{Count: 1, Ops: 50}})
	if len(cases) != 4 {
		t.Fatalf("%d cases", len(cases))
	}
}

func BenchmarkEvictAll(b *testing.B) { harness.RunDefault(b, Family+"/EvictAll") }

func TestEvictAllRuns(t *testing.T) {
	cases := harnesstest.Run(t, harnesstest.Spec{Suite: "cache", Bench: "EvictAll",
		Params:  engine.Overrides{"entries": {"2000"}},
		Measure: result.IterSpec{Count: 1, Ops: 3}})
	if len(cases) != 4 {
		t.Fatalf("%d cases", len(cases))
	}
	for _, c := range cases {
		if c.Iterations[0].Total.Ops != 3 {
			t.Fatalf("%s: %d ops, want 3", c.Case.Name(), c.Iterations[0].Total.Ops)
		}
	}
}

func BenchmarkInsertAndEvictFloor(b *testing.B) { harness.RunDefault(b, Family+"/InsertAndEvictFloor") }

// TestInsertAndEvictFloorRuns: the floor allocates nothing per op and
// leaves every entry's reference count as it found it.
func TestInsertAndEvictFloorRuns(t *testing.T) {
	cases := harnesstest.Run(t, harnesstest.Spec{Suite: "cache", Bench: "InsertAndEvictFloor",
		Measure: result.IterSpec{Count: 1, Ops: 200}})
	if len(cases) != 2 {
		t.Fatalf("%d cases, want one per batch size", len(cases))
	}
	for _, c := range cases {
		it := c.Iterations[0]
		if a := float64(it.Allocs) / float64(it.Executed); a > 0.05 {
			t.Errorf("%s: %.2f allocs/op, want 0", c.Case.Name(), a)
		}
	}
}
