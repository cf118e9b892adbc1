package eviction

import (
	"fmt"

	"github.com/ledgerbench/ledgerbench/bench/insert"
	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/impl/cache"
)

// Family is the family name.
const Family = "eviction"

func insertAndEvict() *harness.Benchmark {
	return &harness.Benchmark{
		Family: Family, Name: "InsertAndEvict", Suites: []string{"cache"},
		Doc: "insert batchSize entries, then evict them all by size (requeueing once when they expect a read)",
		Params: []harness.Param{
			{Name: "impl", Values: insert.Impls, Enum: true, Baseline: insert.Baseline},
			{Name: "batchSize", Values: []string{"100", "1000"}, Kind: harness.Int},
			{Name: "requeue", Values: []string{"false", "true"}, Kind: harness.Bool},
		},
		Setup: func(t *harness.Trial) error {
			n := t.Int("batchSize")
			expected := int32(0)
			if t.Param("requeue") == "true" {
				expected = 1
			}
			q := cache.NewRemovalQueue(1, false)
			c, err := insert.NewCache(t.Param("impl"), q)
			if err != nil {
				return err
			}
			if err := insert.ReportBytesPerEntry(t); err != nil {
				return err
			}
			entries := make([]*cache.Entry, n)
			for i := range entries {
				entries[i] = cache.NewEntry(0, int64(i), make([]byte, 1), expected, nil)
			}
			t.OnTeardown(func() error {
				c.Clear()
				for _, e := range entries {
					e.Release()
				}
				return nil
			})
			paged := t.Param("impl") == "paged"
			t.Run(func(w *harness.Worker) (func(), error) {
				return func() {
					put := c.Put // master had no inserter
					if paged {
						put = c.NewInserter().Put
					}
					for _, e := range entries {
						if err := e.Retain(); err != nil {
							panic(err)
						}
						ok, err := put(cache.Position{Ledger: 0, Entry: e.EntryID()}, e, int64(e.Len()))
						if err != nil || !ok {
							panic(fmt.Sprintf("duplicate cache entry %d: %v", e.EntryID(), err))
						}
					}
					removed, bytes, err := q.EvictLeastAccessed(int64(n))
					if err != nil || removed != n || q.Len() != 0 {
						panic(fmt.Sprintf("incomplete eviction: %d of %d, %d queued, %v", removed, n, q.Len(), err))
					}
					w.Sink(uint64(bytes))
				}, nil
			})
			return nil
		},
	}
}

// evictAll is JMH's RangeCacheEvictionBenchmark: every
// invocation starts from a fresh cache of `entries` entries (built in an
// invocation-level setup, outside the timing) and evicts them all by
// timestamp; with useRequeuing, every entry expects one read, 90 % have
// been read and 10 % were accessed, so the queue requeues some before
// removing them. Sample mode: the latency of one full eviction.
func evictAll() *harness.Benchmark {
	return &harness.Benchmark{
		Family: Family, Name: "EvictAll", Suites: []string{"cache"}, Mode: harness.SampleTime,
		Doc: "time to evict a whole cache of `entries` entries by timestamp",
		Params: []harness.Param{
			{Name: "impl", Values: insert.Impls, Enum: true, Baseline: insert.Baseline},
			{Name: "useRequeuing", Values: []string{"false", "true"}, Kind: harness.Bool},
			// A quick run evicts a tenth: the full cache's setup takes
			// seconds per invocation.
			{Name: "entries", Values: []string{"1000000"}, Quick: []string{"100000"}, Kind: harness.Int},
		},
		Setup: func(t *harness.Trial) error {
			n := t.Int("entries")
			requeuing := t.Param("useRequeuing") == "true"
			impl := t.Param("impl")
			var q *cache.RemovalQueue
			var c cache.RangeCache
			t.OnInvocation(func() error {
				q = cache.NewRemovalQueue(5, true)
				var err error
				if c, err = insert.NewCache(impl, q); err != nil {
					return err
				}
				r := t.Rand(7)
				expected := int32(0)
				if requeuing {
					expected = 1
				}
				in := c.NewInserter()
				for i := 0; i < n; i++ {
					e := cache.NewEntry(0, int64(i), nil, expected, nil)
					if ok, err := in.Put(cache.Position{Ledger: 0, Entry: int64(i)}, e, 0); !ok || err != nil {
						return fmt.Errorf("setup put %d: %v", i, err)
					}
					if requeuing {
						if r.IntN(10) == 0 {
							if got := c.Get(cache.Position{Ledger: 0, Entry: int64(i)}); got != nil {
								got.Release() // accessed
							}
						} else {
							e.ReadCountHandler().MarkRead()
						}
					}
				}
				return nil
			}, func() error {
				if n, _ := c.Clear(); n != 0 {
					return fmt.Errorf("%d entries left after the eviction", n)
				}
				return nil
			})
			t.Run(func(w *harness.Worker) (func(), error) {
				return func() {
					for q.Len() > 0 {
						q.EvictBefore(1 << 62)
					}
				}, nil
			})
			return nil
		},
	}
}

// insertAndEvictFloor is InsertAndEvict reduced to the unavoidable work:
// per entry, take a reference, store its pointer in a slot and append it
// to a queue; then evict: drain the queue, clearing each slot and
// releasing the reference.
func insertAndEvictFloor() *harness.Benchmark {
	return &harness.Benchmark{
		Family: Family, Name: "InsertAndEvictFloor", Suites: []string{"cache"},
		Doc: "InsertAndEvict reduced to the unavoidable work: retain, store a pointer, queue; then release all",
		Params: []harness.Param{
			{Name: "batchSize", Values: []string{"100", "1000"}, Kind: harness.Int},
		},
		Setup: func(t *harness.Trial) error {
			n := t.Int("batchSize")
			entries := make([]*cache.Entry, n)
			for i := range entries {
				entries[i] = cache.NewEntry(0, int64(i), make([]byte, 1), 0, nil)
			}
			t.OnTeardown(func() error {
				for _, e := range entries {
					e.Release()
				}
				return nil
			})
			t.Run(func(w *harness.Worker) (func(), error) {
				slots := make([]*cache.Entry, n)
				queue := make([]*cache.Entry, 0, n)
				return func() {
					for i, e := range entries {
						if err := e.Retain(); err != nil {
							panic(err)
						}
						slots[i] = e
						queue = append(queue, e)
					}
					var bytes int64
					for _, e := range queue {
						slots[e.EntryID()] = nil
						bytes += int64(e.Len())
						e.Release()
					}
					queue = queue[:0]
					w.Sink(uint64(bytes))
				}, nil
			})
			return nil
		},
	}
}

func init() {
	harness.Register(insertAndEvict())
	harness.Register(insertAndEvictFloor())
	harness.Register(evictAll())
	harness.Register(hitRate())
	harness.Register(harness.NoopBenchmark(Family, "EvictionNoop", "cache"))
}
