package eviction

import (
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/harnesstest"
)

func BenchmarkInsertAndEvict(b *testing.B) { harness.RunDefault(b, Family+"/InsertAndEvict") }

func TestInsertAndEvictRuns(t *testing.T) {
	cases := harnesstest.Run(t, harnesstest.Spec{Suite: "cache", Bench: "InsertAndEvict",
		Params:  harness.Overrides{"batchSize": {"100"}},
		Measure: harness.IterSpec{Count: 1, Ops: 50}})
	if len(cases) != 4 {
		t.Fatalf("%d cases", len(cases))
	}
}

func BenchmarkEvictAll(b *testing.B) { harness.RunDefault(b, Family+"/EvictAll") }

func TestEvictAllRuns(t *testing.T) {
	cases := harnesstest.Run(t, harnesstest.Spec{Suite: "cache", Bench: "EvictAll",
		Params:  harness.Overrides{"entries": {"2000"}},
		Measure: harness.IterSpec{Count: 1, Ops: 3}})
	if len(cases) != 4 {
		t.Fatalf("%d cases", len(cases))
	}
	for _, c := range cases {
		if c.Iterations[0].Total.Ops != 3 {
			t.Fatalf("%s: %d ops, want 3", c.Case.Name(), c.Iterations[0].Total.Ops)
		}
	}
}
