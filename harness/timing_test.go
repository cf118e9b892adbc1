package harness_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
)

// pure is a pure function: without the sink the compiler could delete its
// call from the benchmark body entirely.
func pure(x uint64) uint64 {
	for i := 0; i < 64; i++ {
		x ^= x >> 29
		x *= 0xbf58476d1ce4e5b9
	}
	return x
}

func nsPerOp(t *testing.T, body func(w *harness.Worker) func()) float64 {
	t.Helper()
	b := &harness.Benchmark{Family: "test", Name: "Ns", Setup: func(tr *harness.Trial) error {
		tr.Run(func(w *harness.Worker) (func(), error) { return body(w), nil })
		return nil
	}}
	its := run(t, b, &harness.Plan{Benchmark: "test/Ns", Measure: result.IterSpec{Count: 3, Ops: 200_000}, Seed: 1})
	best := its[0].Total.NsPerOp
	for _, it := range its {
		best = min(best, it.Total.NsPerOp)
	}
	return best
}

// TestSinkPreventsElimination: a benchmark of a pure function whose result
// goes into the sink costs far more than an empty op; if the work were
// deleted both would cost the same.
func TestSinkPreventsElimination(t *testing.T) {
	noop := nsPerOp(t, func(w *harness.Worker) func() { return func() {} })
	sunk := nsPerOp(t, func(w *harness.Worker) func() {
		x := uint64(7)
		return func() { w.Sink(pure(x)) }
	})
	generic := nsPerOp(t, func(w *harness.Worker) func() {
		x := uint64(7)
		return func() { harness.Sink(pure(x)) }
	})
	t.Logf("noop %.2f ns/op, pure+Worker.Sink %.2f ns/op, pure+Sink %.2f ns/op", noop, sunk, generic)
	if sunk < 4*noop || generic < 4*noop {
		t.Errorf("a 64-step dependent chain costs %.2f / %.2f ns/op against %.2f for an empty op: the work was eliminated", sunk, generic, noop)
	}
}

// TestAllocationsExact: B/op and allocs/op count exactly what the op
// allocates, with the harness's own allocations outside the window.
func TestAllocationsExact(t *testing.T) {
	for _, spec := range []result.IterSpec{{Count: 3, Ops: 10_000}, {Count: 3, Time: 20 * time.Millisecond}} {
		b := &harness.Benchmark{Family: "test", Name: "Alloc", Setup: func(tr *harness.Trial) error {
			tr.Run(func(w *harness.Worker) (func(), error) {
				var keep []byte
				return func() { keep = make([]byte, 128); w.Sink(uint64(len(keep))) }, nil
			})
			return nil
		}}
		for _, it := range run(t, b, &harness.Plan{Benchmark: "test/Alloc", Measure: spec, Seed: 1}) {
			if spec.Ops > 0 {
				// The op's allocations are counted exactly; the Go runtime's
				// own background work (GC workers, timer heaps) may add a
				// couple of small objects to any window, as in testing.B.
				extra, extraBytes := int64(it.Allocs)-spec.Ops, int64(it.AllocBytes)-128*spec.Ops
				if extra < 0 || extra > 3 || extraBytes < 0 || extraBytes > 3*512 {
					t.Errorf("%s: %d allocs of %d bytes for %d ops, want %d and %d (+ at most 3 runtime objects)", spec, it.Allocs, it.AllocBytes, it.Executed, spec.Ops, 128*spec.Ops)
				}
				continue
			}
			// A timed window is long enough for the runtime's own rare
			// allocations; allow one in ten thousand ops.
			if a := it.AllocsPerOp(); a < 1 || a > 1.0001 {
				t.Errorf("%s: %.6f allocs/op, want 1", spec, a)
			}
			if bpo := it.BytesPerOp(); bpo < 128 || bpo > 128.1 {
				t.Errorf("%s: %.4f B/op, want 128", spec, bpo)
			}
		}
	}
}

func TestSampleTimePercentiles(t *testing.T) {
	b := &harness.Benchmark{Family: "test", Name: "Sample", Mode: harness.SampleTime, Setup: func(tr *harness.Trial) error {
		tr.Run(func(w *harness.Worker) (func(), error) {
			n := 0
			return func() {
				n++
				if n%100 == 0 {
					time.Sleep(200 * time.Microsecond) // one op in a hundred is slow
				}
			}, nil
		})
		return nil
	}}
	its := run(t, b, &harness.Plan{Benchmark: "test/Sample", Mode: harness.SampleTime, Measure: result.IterSpec{Count: 1, Ops: 5000}, Seed: 1})
	it := its[0]
	if it.TimerNs <= 0 {
		t.Errorf("timer cost %v: not measured", it.TimerNs)
	}
	h, err := result.DecodeHistogram(it.Total.Hist)
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != 5000 {
		t.Fatalf("histogram holds %d samples, want 5000", h.TotalCount())
	}
	p50, p999 := h.ValueAtQuantile(50), h.ValueAtQuantile(99.9)
	if p50 >= 200_000 || p999 < 200_000 {
		t.Errorf("p50 %d ns, p99.9 %d ns: want p50 fast and p99.9 at least the 200 µs sleep", p50, p999)
	}
}

func TestSingleShotRunsOneInvocation(t *testing.T) {
	calls := 0
	b := &harness.Benchmark{Family: "test", Name: "SS", Setup: func(tr *harness.Trial) error {
		tr.Run(func(w *harness.Worker) (func(), error) { return func() { calls++ }, nil })
		return nil
	}}
	its := run(t, b, &harness.Plan{Benchmark: "test/SS", Mode: harness.SingleShot, Measure: result.IterSpec{Count: 4, Time: time.Second}, Seed: 1})
	if calls != 4 || len(its) != 4 || its[0].Total.Ops != 1 || its[0].Total.NsPerOp <= 0 {
		t.Errorf("single shot: %d calls over %d iterations, %d ops per iteration (%v ns); want 4, 4, 1 and a time", calls, len(its), its[0].Total.Ops, its[0].Total.NsPerOp)
	}
}

// TestPlantedSlowdownIsMeasured: a plan's Plant spins inside the window
// for that fraction of the ops' time, and the spin is measured with
// them. Each op sleeps at least 1 ms, so with Plant 1 every window,
// counted or timed, lasts at least 2 ms an op; unplanted, it lasts about
// 1.1. A plant beyond MaxPlant is refused.
func TestPlantedSlowdownIsMeasured(t *testing.T) {
	b := &harness.Benchmark{Family: "test", Name: "Sleep", Setup: func(tr *harness.Trial) error {
		tr.Run(func(w *harness.Worker) (func(), error) { return func() { time.Sleep(time.Millisecond) }, nil })
		return nil
	}}
	for _, spec := range []result.IterSpec{{Count: 2, Ops: 10}, {Count: 2, Time: 20 * time.Millisecond}} {
		for _, plant := range []float64{0, 1} {
			its := run(t, b, &harness.Plan{Benchmark: "test/Sleep", Measure: spec, Seed: 1, Plant: plant})
			for _, it := range its {
				ms := it.Total.NsPerOp / 1e6
				t.Logf("%v plant %g: %.3f ms/op", spec, plant, ms)
				if plant == 1 && ms < 2 {
					t.Errorf("%v: planted +100 %%, each op at least 1 ms: %.3f ms/op", spec, ms)
				}
				if plant == 0 && ms < 1 {
					t.Errorf("%v: each op sleeps at least 1 ms: %.3f ms/op", spec, ms)
				}
			}
		}
	}
	r := &harness.Registry{}
	r.Register(b)
	err := runPlan(r, &harness.Plan{Benchmark: "test/Sleep", Measure: result.IterSpec{Count: 1, Ops: 1}, Plant: 1.5}, func(*result.Iteration) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "planted slowdown 1.5") {
		t.Errorf("a plant of +150 %%: %v, want it refused", err)
	}
}
