package read

import (
	"fmt"

	"github.com/ledgerbench/ledgerbench/bench/insert"
	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/impl/cache"
)

const rangeCount = 16

// readRange is JMH's RangeCacheReadBenchmark.readRange
// 16 ranges of batchSize positions,
// one per ledger, of which the first hitPercent of every 100 entry IDs are
// cached; one op reads one range with GetRange and releases every entry.
func readRange() *harness.Benchmark {
	return &harness.Benchmark{
		Family: Family, Name: "ReadRange", Suites: []string{"cache"},
		Doc: "read a range of batchSize positions of which hitPercent % are cached (getRange, release each)",
		Params: []harness.Param{
			{Name: "impl", Values: insert.Impls, Enum: true, Baseline: insert.Baseline},
			{Name: "batchSize", Values: []string{"100", "1000"}, Kind: harness.Int},
			{Name: "hitPercent", Values: []string{"0", "10", "100"}, Kind: harness.Int},
		},
		Units: []harness.UnitInfo{{Unit: "hits/op", Better: "higher"}},
		Setup: func(t *harness.Trial) error {
			c, n, err := filledCache(t)
			if err != nil {
				return err
			}
			t.Run(func(w *harness.Worker) (func(), error) {
				hits := w.Counter("hits/op")
				r := int64(0)
				return func() {
					es := c.GetRange(cache.Position{Ledger: r, Entry: 0}, cache.Position{Ledger: r, Entry: n - 1})
					for _, e := range es {
						e.Release()
					}
					hits.Add(int64(len(es)))
					if r++; r == rangeCount {
						r = 0
					}
				}, nil
			})
			return nil
		},
	}
}

// readAndCopyRange is readRange through ForEachInRange into a list of
// batchSize slots of dispatch copies (what the entry cache hands to a
// consumer), releasing every copy afterwards.
func readAndCopyRange() *harness.Benchmark {
	b := readRange()
	b.Name = "ReadAndCopyRange"
	b.Doc = "read a range into dispatch copies (forEachInRange), then release them"
	b.Setup = func(t *harness.Trial) error {
		c, n, err := filledCache(t)
		if err != nil {
			return err
		}
		t.Run(func(w *harness.Worker) (func(), error) {
			hits := w.Counter("hits/op")
			slots := make([]*cache.Entry, n)
			// made once: a visitor made per op would escape through the
			// interface call and allocate on every read, hit or not
			copyInto := func(e *cache.Entry) { slots[e.EntryID()] = e.DispatchCopy() }
			r := int64(0)
			return func() {
				c.ForEachInRange(cache.Position{Ledger: r, Entry: 0}, cache.Position{Ledger: r, Entry: n - 1}, copyInto)
				for i, e := range slots {
					if e != nil {
						e.Release()
						slots[i] = nil
						hits.Add(1)
					}
				}
				if r++; r == rangeCount {
					r = 0
				}
			}, nil
		})
		return nil
	}
	return b
}

// filledCache returns the trial's cache (cleared at teardown) filled as
// fill does for its batchSize and hitPercent, and batchSize.
func filledCache(t *harness.Trial) (cache.RangeCache, int64, error) {
	n := int64(t.Int("batchSize"))
	c, err := insert.NewCache(t.Param("impl"), cache.NewRemovalQueue(0, false))
	if err != nil {
		return nil, 0, err
	}
	if err := insert.ReportBytesPerEntry(t); err != nil {
		return nil, 0, err
	}
	t.OnTeardown(func() error { c.Clear(); return nil })
	return c, n, fill(c, n, t.Int("hitPercent"))
}

// fill caches the first hit of every 100 entry IDs of each range.
func fill(c cache.RangeCache, n int64, hit int) error {
	for r := int64(0); r < rangeCount; r++ {
		for i := int64(0); i < n; i++ {
			if int(i%100) < hit {
				e := cache.NewEntry(r, i, nil, 0, nil)
				if ok, err := c.Put(cache.Position{Ledger: r, Entry: i}, e, 0); !ok || err != nil {
					return fmt.Errorf("setup put (%d, %d): %v", r, i, err)
				}
			}
		}
	}
	return nil
}

func init() {
	harness.Register(readRange())
	harness.Register(readAndCopyRange())
}
