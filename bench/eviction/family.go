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
			{Name: "impl", Values: insert.Impls, Enum: true},
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

func init() { harness.Register(insertAndEvict()) }
