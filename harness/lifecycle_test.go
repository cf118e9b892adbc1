package harness_test

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
)

// counts records how often each lifecycle function ran.
type counts struct {
	setup, teardown                     atomic.Int64
	iterSetup, iterTeardown             atomic.Int64
	invSetup, invTeardown               atomic.Int64
	groupSetup, groupTeardown           atomic.Int64
	groupIterSetup, groupIterTeardown   atomic.Int64
	groupInvSetup, groupInvTeardown     atomic.Int64
	bind, workerTeardown                atomic.Int64
	workerIterSetup, workerIterTeardown atomic.Int64
	workerInvSetup, workerInvTeardown   atomic.Int64
	body                                atomic.Int64
	violations                          atomic.Int64
}

func inc(c *atomic.Int64) func() error {
	return func() error { c.Add(1); return nil }
}

// lifecycleBench declares a group benchmark with hooks at every level of
// every scope; invocation hooks bracket each body call, which checks it.
func lifecycleBench(c *counts, invocation bool) *harness.Benchmark {
	bind := func(w *harness.Worker) (func(), error) {
		c.bind.Add(1)
		w.OnIteration(inc(&c.workerIterSetup), inc(&c.workerIterTeardown))
		w.OnTeardown(inc(&c.workerTeardown))
		inside := false
		if invocation {
			w.OnInvocation(func() error {
				c.workerInvSetup.Add(1)
				if inside {
					c.violations.Add(1)
				}
				inside = true
				return nil
			}, func() error {
				c.workerInvTeardown.Add(1)
				if !inside {
					c.violations.Add(1)
				}
				inside = false
				return nil
			})
		}
		return func() {
			c.body.Add(1)
			if invocation && !inside {
				c.violations.Add(1)
			}
		}, nil
	}
	return &harness.Benchmark{
		Family: "test", Name: "Lifecycle",
		Setup: func(t *harness.Trial) error {
			c.setup.Add(1)
			t.OnTeardown(inc(&c.teardown))
			t.OnIteration(inc(&c.iterSetup), inc(&c.iterTeardown))
			if invocation {
				t.OnInvocation(inc(&c.invSetup), inc(&c.invTeardown))
			}
			t.GroupSetup(func(g *harness.Group) error {
				c.groupSetup.Add(1)
				g.OnIteration(inc(&c.groupIterSetup), inc(&c.groupIterTeardown))
				g.OnTeardown(inc(&c.groupTeardown))
				if invocation {
					g.OnInvocation(inc(&c.groupInvSetup), inc(&c.groupInvTeardown))
				}
				return nil
			})
			t.Group(
				harness.Op{Name: "a", Goroutines: 1, Bind: bind},
				harness.Op{Name: "b", Goroutines: 2, Bind: bind},
			)
			return nil
		},
	}
}

func run(t *testing.T, b *harness.Benchmark, p *harness.Plan) []*result.Iteration {
	t.Helper()
	r := &harness.Registry{}
	r.Register(b)
	var its []*result.Iteration
	err := runPlan(r, p, func(it *result.Iteration) error {
		its = append(its, it)
		return nil
	})
	if err != nil {
		t.Fatalf("RunPlan: %v", err)
	}
	return its
}

func TestLifecycleCounts(t *testing.T) {
	const warm, meas, groups, size = 2, 3, 2, 3
	for _, tc := range []struct {
		name       string
		spec       result.IterSpec
		invocation bool
	}{
		{"counted", result.IterSpec{Count: meas, Ops: 50}, false},
		{"counted-invocation", result.IterSpec{Count: meas, Ops: 50}, true},
		{"timed", result.IterSpec{Count: meas, Time: 5 * time.Millisecond}, false},
		{"timed-invocation", result.IterSpec{Count: meas, Time: 5 * time.Millisecond}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c counts
			warmSpec := tc.spec
			warmSpec.Count = warm
			its := run(t, lifecycleBench(&c, tc.invocation), &harness.Plan{
				Benchmark: "test/Lifecycle", Mode: harness.AverageTime, Threads: groups * size,
				Warmup: warmSpec, Measure: tc.spec, Seed: 1,
			})
			if len(its) != warm+meas {
				t.Fatalf("got %d iterations, want %d", len(its), warm+meas)
			}
			var executed int64
			for _, it := range its {
				executed += it.Executed
				if it.Total.Workers != groups*size || len(it.Ops) != 2 {
					t.Fatalf("iteration has %d workers and %d ops, want %d and 2", it.Total.Workers, len(it.Ops), groups*size)
				}
			}
			iters := int64(warm + meas)
			threads := int64(groups * size)
			check := func(what string, got *atomic.Int64, want int64) {
				t.Helper()
				if got.Load() != want {
					t.Errorf("%s ran %d times, want %d", what, got.Load(), want)
				}
			}
			check("trial setup (benchmark scope)", &c.setup, 1)
			check("trial teardown (benchmark scope)", &c.teardown, 1)
			check("iteration setup (benchmark scope)", &c.iterSetup, iters)
			check("iteration teardown (benchmark scope)", &c.iterTeardown, iters)
			check("trial setup (group scope)", &c.groupSetup, groups)
			check("trial teardown (group scope)", &c.groupTeardown, groups)
			check("iteration setup (group scope)", &c.groupIterSetup, iters*groups)
			check("iteration teardown (group scope)", &c.groupIterTeardown, iters*groups)
			check("bind (goroutine scope)", &c.bind, threads)
			check("trial teardown (goroutine scope)", &c.workerTeardown, threads)
			check("iteration setup (goroutine scope)", &c.workerIterSetup, iters*threads)
			check("iteration teardown (goroutine scope)", &c.workerIterTeardown, iters*threads)
			check("op body", &c.body, executed)
			if tc.spec.Ops > 0 && executed != iters*threads*tc.spec.Ops {
				t.Errorf("executed %d ops, want %d", executed, iters*threads*tc.spec.Ops)
			}
			if tc.invocation {
				for _, s := range []struct {
					name string
					c    *atomic.Int64
				}{
					{"invocation setup (benchmark scope)", &c.invSetup}, {"invocation teardown (benchmark scope)", &c.invTeardown},
					{"invocation setup (group scope)", &c.groupInvSetup}, {"invocation teardown (group scope)", &c.groupInvTeardown},
					{"invocation setup (goroutine scope)", &c.workerInvSetup}, {"invocation teardown (goroutine scope)", &c.workerInvTeardown},
				} {
					check(s.name, s.c, executed)
				}
			}
			if v := c.violations.Load(); v != 0 {
				t.Errorf("%d invocations ran outside their setup/teardown bracket", v)
			}
		})
	}
}

func TestOpsPerInvocationAndCounters(t *testing.T) {
	b := &harness.Benchmark{
		Family: "test", Name: "Opi", OpsPerInvocation: 4,
		Setup: func(t *harness.Trial) error {
			t.Run(func(w *harness.Worker) (func(), error) {
				hits, pct := w.Counter("hits/op"), w.Counter("hit-%/op")
				return func() { hits.Add(2); pct.AddFloat(0.25) }, nil
			})
			return nil
		},
	}
	its := run(t, b, &harness.Plan{Benchmark: "test/Opi", Measure: result.IterSpec{Count: 2, Ops: 100}, Seed: 1})
	for _, it := range its {
		if it.Total.Ops != 400 || it.Executed != 400 {
			t.Errorf("ops %d executed %d, want 400 each (100 invocations × 4)", it.Total.Ops, it.Executed)
		}
		if got := it.Total.Metrics["hits/op"]; got != 0.5 {
			t.Errorf("hits/op = %v, want 0.5 (2 per invocation of 4 ops)", got)
		}
		if got := it.Total.Metrics["hit-%/op"]; got != 0.0625 {
			t.Errorf("hit-%%/op = %v, want 0.0625 (0.25 per invocation of 4 ops)", got)
		}
	}
}

func TestTeardownRunsAfterFailure(t *testing.T) {
	var c counts
	b := &harness.Benchmark{
		Family: "test", Name: "FailIter",
		Setup: func(t *harness.Trial) error {
			t.OnTeardown(inc(&c.teardown))
			n := 0
			t.OnIteration(func() error {
				n++
				if n == 2 {
					return fmt.Errorf("second iteration refused")
				}
				return nil
			}, nil)
			t.Run(func(w *harness.Worker) (func(), error) {
				w.OnTeardown(inc(&c.workerTeardown))
				return func() {}, nil
			})
			return nil
		},
	}
	r := &harness.Registry{}
	r.Register(b)
	got := 0
	err := runPlan(r, &harness.Plan{Benchmark: "test/FailIter", Measure: result.IterSpec{Count: 3, Ops: 10}}, func(*result.Iteration) error { got++; return nil })
	var pe *harness.PhaseError
	if !asPhase(err, &pe) || pe.Phase != "iteration setup" {
		t.Fatalf("err = %v, want an iteration setup PhaseError", err)
	}
	if got != 1 || c.teardown.Load() != 1 || c.workerTeardown.Load() != 1 {
		t.Errorf("iterations %d, trial teardowns %d, worker teardowns %d; want 1, 1, 1", got, c.teardown.Load(), c.workerTeardown.Load())
	}
}

// TestNonFiniteMetricIsNamed: a custom metric that comes out NaN or
// infinite fails the trial with the metric's name, before any result is
// emitted (JSON cannot carry it to the parent).
func TestNonFiniteMetricIsNamed(t *testing.T) {
	for name, setup := range map[string]func(*harness.Trial) error{
		"counter": func(tr *harness.Trial) error {
			tr.Run(func(w *harness.Worker) (func(), error) {
				c := w.Counter("ratio/op")
				return func() { c.AddFloat(math.NaN()) }, nil
			})
			return nil
		},
		"trial": func(tr *harness.Trial) error {
			tr.ReportMetric("B/entry", math.Inf(1))
			tr.Run(func(w *harness.Worker) (func(), error) { return func() {}, nil })
			return nil
		},
	} {
		r := &harness.Registry{}
		r.Register(&harness.Benchmark{Family: "test", Name: "NaN" + name, Setup: setup})
		emitted := 0
		err := runPlan(r, &harness.Plan{Benchmark: "test/NaN" + name, Measure: result.IterSpec{Count: 1, Ops: 10}},
			func(*result.Iteration) error { emitted++; return nil })
		unit := map[string]string{"counter": `"ratio/op" is NaN`, "trial": `"B/entry" is +Inf`}[name]
		if err == nil || !strings.Contains(err.Error(), unit) || emitted != 0 {
			t.Errorf("%s: %v after %d iterations, want an error naming metric %s", name, err, emitted, unit)
		}
	}
}
