package cursor

import (
	"math"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/harnesstest"
)

func BenchmarkSeekForward01(b *testing.B) { harness.RunDefault(b, Family+"/SeekForward01") }
func BenchmarkSeekForward10(b *testing.B) { harness.RunDefault(b, Family+"/SeekForward10") }
func BenchmarkSlowest01(b *testing.B)     { harness.RunDefault(b, Family+"/Slowest01") }
func BenchmarkChurn(b *testing.B)         { harness.RunDefault(b, Family+"/Churn") }

// TestFamilyRuns runs every case briefly in process (the teardown checks
// the container's size and slowest position) and checks counted/op: the
// counting containers count every ratio-th op, the heap never does.
func TestFamilyRuns(t *testing.T) {
	cases := harnesstest.Run(t, harnesstest.Spec{Suite: "cursor",
		Params:  engine.Overrides{"cursors": {"10", "100"}},
		Measure: result.IterSpec{Count: 1, Ops: 1000}})
	// seek ×2 and churn: 3 impls × 2 sizes × 4 ratios; slowest ×2: 3 × 2; noop.
	if want := 3*3*2*4 + 2*3*2 + 1; len(cases) != want {
		t.Fatalf("%d cases, want %d", len(cases), want)
	}
	for _, c := range cases {
		name := c.Case.Name()
		ratio, hasRatio := c.Case.Params.Get("ratio")
		if !hasRatio {
			continue
		}
		impl, _ := c.Case.Params.Get("impl")
		got := c.Iterations[0].Total.Metrics["counted/op"]
		want := 0.0
		if impl != "heap" {
			switch ratio {
			case "1":
				want = 1
			case "10":
				want = 0.1
			case "100":
				want = 0.01
			}
		}
		if math.Abs(got-want) > 0.011 {
			t.Errorf("%s: counted/op = %v, want %v", name, got, want)
		}
	}
}
