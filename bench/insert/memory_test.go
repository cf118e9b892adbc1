package insert_test

import (
	"strings"
	"testing"

	_ "github.com/ledgerbench/ledgerbench/bench/catchup"
	_ "github.com/ledgerbench/ledgerbench/bench/eviction"
	_ "github.com/ledgerbench/ledgerbench/bench/read"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/harnesstest"
)

// TestEveryFamilyReportsBytesPerEntry: each family of the cache suite that
// compares the two caches reports B/entry for both, and a full page's
// share is well under a skip-list node's (the totals include the wrapper
// and queue slot both share).
func TestEveryFamilyReportsBytesPerEntry(t *testing.T) {
	cases := harnesstest.Run(t, harnesstest.Spec{Suite: "cache",
		Bench: "^Benchmark(InsertAtTail|CatchUp|InsertAndEvict|ReadRange|ReadAndCopyRange)/",
		Params: engine.Overrides{"cachedEntries": {"1000"}, "batchSize": {"100"},
			"hitPercent": {"100"}, "requeue": {"false"}},
		Measure: result.IterSpec{Count: 1, Ops: 10}})
	perBench := map[string]map[string]float64{}
	for _, c := range cases {
		impl, _ := c.Case.Params.Get("impl")
		b := strings.TrimPrefix(c.Case.Benchmark, "Benchmark")
		if perBench[b] == nil {
			perBench[b] = map[string]float64{}
		}
		perBench[b][impl] = c.Iterations[0].Total.Metrics["B/entry"]
	}
	if len(perBench) != 5 {
		t.Fatalf("%d benchmarks ran, want 5: %v", len(perBench), perBench)
	}
	for b, m := range perBench {
		t.Logf("%s: B/entry %v", b, m)
		if m["skiplist"] <= 0 || m["paged"] <= 0 {
			t.Errorf("%s: B/entry %v, want both measured", b, m)
		} else if m["paged"] > 0.75*m["skiplist"] {
			t.Errorf("%s: B/entry paged %.1f against skiplist %.1f", b, m["paged"], m["skiplist"])
		}
	}
}
