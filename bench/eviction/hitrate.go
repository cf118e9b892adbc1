package eviction

import (
	"fmt"

	"github.com/ledgerbench/ledgerbench/bench/insert"
	"github.com/ledgerbench/ledgerbench/harness"
)

// hitRate runs the cache hit-rate simulation (PIP-430's rolling-restart
// test, see Simulate): one op, in single-shot mode, is one simulated 30 s
// run with a seed drawn from the worker's stream, so the metrics of the
// iterations are runs over different seeds. The time per op is what
// simulating the run costs; the metrics are the point.
func hitRate() *harness.Benchmark {
	workloads := []string{"rolling", "mixed"} // the seed's first; keys of Workloads
	return &harness.Benchmark{
		Family: Family, Name: "HitRate", Suites: []string{"cache"}, Mode: harness.SingleShot,
		Units: []harness.UnitInfo{{Unit: "hit-%/op", Better: "higher"}},
		Doc:   "cache hit % and storage reads per 1,000 messages of a topic whose broker restarts, by eviction policy",
		Params: []harness.Param{
			{Name: "workload", Values: workloads, Enum: true},
			{Name: "policy", Values: Policies, Enum: true},
			{Name: "impl", Values: insert.Impls, Enum: true, Baseline: insert.Baseline},
		},
		Setup: func(t *harness.Trial) error {
			build := Workloads[t.Param("workload")]
			impl, policy := t.Param("impl"), Policy(t.Param("policy"))
			cfg := build(impl, policy, 0)
			if err := cfg.validate(); err != nil {
				return err
			}
			t.Run(func(w *harness.Worker) (func(), error) {
				hit := w.Counter("hit-%/op")
				reads := w.Counter("storage-reads-per-kmsg/op")
				entries := w.Counter("storage-entries-per-kmsg/op")
				rng := w.Rand()
				return func() {
					r, err := Simulate(build(impl, policy, rng.Uint64()))
					if err != nil {
						panic(fmt.Sprintf("simulation: %v", err))
					}
					hit.AddFloat(r.HitPercent())
					reads.AddFloat(r.PerThousand(r.StorageReads))
					entries.AddFloat(r.PerThousand(r.StorageEntries))
					w.Sink(uint64(r.Delivered))
				}, nil
			})
			return nil
		},
	}
}
