package location

import (
	"strings"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/harnesstest"
)

func BenchmarkGet(b *testing.B)      { harness.RunDefault(b, Family+"/Get") }
func BenchmarkGetFloor(b *testing.B) { harness.RunDefault(b, Family+"/GetFloor") }

// TestFamilyRuns runs both benchmarks on the smoke profile in every
// layout: every get checks the location it finds, so a run is also a
// correctness check, and the store layouts report their counters.
func TestFamilyRuns(t *testing.T) {
	t.Setenv("LEDGERBENCH_DATA", t.TempDir())
	for _, bench := range []string{"Get", "GetFloor"} {
		cases := harnesstest.Run(t, harnesstest.Spec{Suite: "location", Bench: "^Benchmark" + bench + "/",
			Params:  engine.Overrides{"profile": {"smoke"}, "cache": {"1MiB"}},
			Measure: result.IterSpec{Count: 1, Ops: 200}})
		if len(cases) != 3 {
			t.Fatalf("%s: %d cases, want one per layout", bench, len(cases))
		}
		for _, c := range cases {
			m := c.Iterations[0].Total.Metrics
			layout, _ := c.Case.Params.Get("layout")
			pebble := layout == "pebble"
			if pebble != (m == nil) {
				t.Errorf("%s: metrics %v", c.Case.Name(), m)
			}
			if !pebble && m["sst-probes/op"] < 1 {
				t.Errorf("%s: %v sst probes per get", c.Case.Name(), m["sst-probes/op"])
			}
		}
	}
}

// TestBadCacheSize: a cache size of zero is refused when the run is
// planned, before any dataset is built, with a clear error.
func TestBadCacheSize(t *testing.T) {
	o := engine.DefaultOptions()
	o.Suite, o.Bench, o.Forks = "location", "^BenchmarkGet/", 0
	o.Params = engine.Overrides{"profile": {"smoke"}, "cache": {"0"}, "layout": {"full"}}
	o.Measure = result.IterSpec{Count: 1, Ops: 1}
	_, err := o.Plan(harness.Default)
	if err == nil || !strings.Contains(err.Error(), `parameter cache: value "0": size must be a positive`) {
		t.Errorf("plan of cache=0: %v", err)
	}
}
