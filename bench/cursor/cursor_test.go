package cursor

import (
	"math"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
)

func BenchmarkSeekForward01(b *testing.B) { harness.RunDefault(b, Family+"/SeekForward01") }
func BenchmarkSeekForward10(b *testing.B) { harness.RunDefault(b, Family+"/SeekForward10") }
func BenchmarkSlowest01(b *testing.B)     { harness.RunDefault(b, Family+"/Slowest01") }
func BenchmarkChurn(b *testing.B)         { harness.RunDefault(b, Family+"/Churn") }

// TestFamilyRuns runs every case briefly in process (the teardown checks
// the container's size and slowest position) and checks counted/op: the
// counting containers count every ratio-th op, the heap never does.
func TestFamilyRuns(t *testing.T) {
	o := harness.DefaultOptions()
	o.Suite, o.Forks = "cursor", 0
	o.Warmup = harness.IterSpec{}
	o.Measure = harness.IterSpec{Count: 1, Ops: 1000}
	o.Params = harness.Overrides{"cursors": {"10", "100"}}
	run, err := (&harness.Runner{Registry: harness.Default}).Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	// seek ×2 and churn: 3 impls × 2 sizes × 4 ratios; slowest ×2: 3 × 2; noop.
	if want := 3*3*2*4 + 2*3*2 + 1; len(run.Cases) != want {
		t.Fatalf("%d cases, want %d", len(run.Cases), want)
	}
	for _, c := range run.Cases {
		name := c.Case.Name()
		if len(c.Failures) > 0 {
			t.Fatalf("%s: %v", name, c.Failures[0])
		}
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
