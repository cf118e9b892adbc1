package harness_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
)

// TestSynchronizedIterations checks JMH's synchronized iterations on an
// asymmetric group with a late starter and a slow op:
//   - no op is measured before every worker has run an op in that
//     iteration (all workers start together);
//   - the fast workers keep running (ramp-down) while the slow worker is
//     still inside its measured window, so every measured op ran while all
//     workers were running.
func TestSynchronizedIterations(t *testing.T) {
	for _, mode := range []harness.Mode{harness.AverageTime, harness.SampleTime} {
		t.Run(string(mode), func(t *testing.T) { testSynchronizedIterations(t, mode) })
	}
}

func testSynchronizedIterations(t *testing.T, mode harness.Mode) {
	const workers = 4
	var (
		startedN atomic.Int64 // workers that have completed their first op this iteration
		slowIn   atomic.Bool  // the slow worker's current op is measured
		early    atomic.Int64 // measured ops run before every worker started
		overlap  atomic.Int64 // iterations where a fast worker ran unmeasured ops while the slow op was measured
		measured atomic.Int64
	)
	body := func(w *harness.Worker, slow bool) (func(), error) {
		var ran, wasIn, sawOverlap bool
		w.OnIteration(func() error { ran, wasIn, sawOverlap = false, false, false; return nil }, func() error {
			if !slow && sawOverlap {
				overlap.Add(1)
			}
			return nil
		})
		return func() {
			if !ran {
				ran = true
				if slow {
					time.Sleep(3 * time.Millisecond) // a late starter
				}
				startedN.Add(1)
			}
			in := w.InWindow()
			if in {
				wasIn = true
				measured.Add(1)
				if startedN.Load() < workers {
					early.Add(1)
				}
			}
			if slow {
				slowIn.Store(in)
				time.Sleep(time.Millisecond)
				slowIn.Store(false)
			} else if !in && wasIn && slowIn.Load() {
				sawOverlap = true
			}
		}, nil
	}
	b := &harness.Benchmark{
		Family: "test", Name: "Sync",
		Setup: func(tr *harness.Trial) error {
			tr.OnIteration(func() error { startedN.Store(0); return nil }, nil)
			tr.Group(
				harness.Op{Name: "fast", Goroutines: 3, Bind: func(w *harness.Worker) (func(), error) { return body(w, false) }},
				harness.Op{Name: "slow", Goroutines: 1, Bind: func(w *harness.Worker) (func(), error) { return body(w, true) }},
			)
			return nil
		},
	}
	const iters = 3
	its := run(t, b, &harness.Plan{Benchmark: "test/Sync", Mode: mode, Measure: result.IterSpec{Count: iters, Time: 30 * time.Millisecond}, Seed: 1})
	if n := early.Load(); n != 0 {
		t.Errorf("%d measured ops ran before every worker had started", n)
	}
	if n := overlap.Load(); n == 0 {
		t.Errorf("no fast worker kept running while the slow op was measured: no ramp-down")
	}
	var inWindow int64
	for _, it := range its {
		inWindow += it.Total.Ops
		if it.Ops[1].Ops == 0 {
			t.Errorf("the slow, late worker measured no op in iteration %d", it.Index)
		}
	}
	if inWindow != measured.Load() {
		t.Errorf("results count %d measured ops, the bodies saw %d inside their window", inWindow, measured.Load())
	}
}
