package insert

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/impl/cache"
)

// Family is the family name.
const Family = "insert"

const (
	trimBatch        = 100
	entriesPerLedger = 50_000
	// memoryEntries is how many entries the B/entry measurement caches:
	// enough that unrelated heap changes do not show (a kilobyte is
	// 0.06 B/entry), and a power of two, so the removal queue's ring
	// (doubling from 64 slots) and the pages (64 entries) are exactly
	// full: 8 B of queue slot an entry, no slack. Every fork of the cache
	// suite measures it at setup: 200,000 entries took ~300 ms of each
	// fork, half of a quick fork's time.
	memoryEntries = 1 << 14
)

// Impls are the range cache implementations, master first.
var Impls = []string{"skiplist", "paged"}

// Baseline is the implementation the pages of apache/pulsar#26821 are
// compared against: the skip list the broker caches entries in today.
const Baseline = "skiplist"

// NewCache returns the named implementation.
func NewCache(name string, q *cache.RemovalQueue) (cache.RangeCache, error) {
	switch name {
	case "skiplist":
		return cache.NewSkipList(q), nil
	case "paged":
		return cache.NewPaged(q), nil
	}
	return nil, fmt.Errorf("unknown impl %q", name)
}

func insertAtTail() *harness.Benchmark {
	return &harness.Benchmark{
		Family: Family, Name: "InsertAtTail", Suites: []string{"cache"},
		Doc: "tail inserts with a head trim every 100 ops keeping cachedEntries entries",
		Params: []harness.Param{
			{Name: "impl", Values: Impls, Enum: true, Baseline: Baseline},
			{Name: "cachedEntries", Values: []string{"1000", "100000"}, Kind: harness.Int},
		},
		Setup: func(t *harness.Trial) error {
			cached := int64(t.Int("cachedEntries"))
			q := cache.NewRemovalQueue(0, false)
			c, err := NewCache(t.Param("impl"), q)
			if err != nil {
				return err
			}
			t.OnTeardown(func() error { c.Clear(); return nil })
			var put func(cache.Position, *cache.Entry, int64) (bool, error)
			if t.Param("impl") == "paged" {
				put = c.NewInserter().Put
			} else {
				put = c.Put // master had no inserter
			}
			var payload []byte
			var seq, ledger, entry int64
			insert := func() bool {
				e := cache.NewEntry(ledger, entry, payload, 0, nil)
				ok, err := put(cache.Position{Ledger: ledger, Entry: entry}, e, int64(e.Len()))
				if err != nil {
					panic(err)
				}
				if !ok {
					e.Release()
				}
				seq++
				if entry++; entry == entriesPerLedger {
					ledger, entry = ledger+1, 0
				}
				return ok
			}
			if err := ReportBytesPerEntry(t); err != nil {
				return err
			}
			for i := int64(0); i < cached; i++ {
				insert()
			}
			t.Run(func(w *harness.Worker) (func(), error) {
				return func() {
					ok := insert()
					if seq%trimBatch == 0 {
						first := seq - cached
						c.RemoveRange(cache.Position{Ledger: -1}, cache.Position{Ledger: first / entriesPerLedger, Entry: first % entriesPerLedger}, false)
						q.EvictBefore(-1 << 63)
					}
					harness.Sink(ok)
				}, nil
			})
			return nil
		},
	}
}

func floor() *harness.Benchmark {
	return &harness.Benchmark{
		Family: Family, Name: "InsertFloor", Suites: []string{"cache"},
		Doc: "the unavoidable work of an insert: allocate the entry, store a pointer, append to a queue",
		Setup: func(t *harness.Trial) error {
			ring := make([]*cache.Entry, 1<<16)
			queue := make([]*cache.Entry, 0, 1<<16)
			t.Run(func(w *harness.Worker) (func(), error) {
				var i int64
				return func() {
					e := cache.NewEntry(0, i, nil, 0, nil)
					ring[i&(1<<16-1)] = e
					if len(queue) == cap(queue) {
						queue = queue[:0]
					}
					queue = append(queue, e)
					i++
				}, nil
			})
			return nil
		},
	}
}

// Benchmarks returns the family's declarations.
func Benchmarks() []*harness.Benchmark {
	return []*harness.Benchmark{
		insertAtTail(), floor(),
		harness.NoopBenchmark(Family, "InsertNoop", "cache"),
	}
}

func init() {
	for _, b := range Benchmarks() {
		harness.Register(b)
	}
}

// ReportBytesPerEntry reports the trial's B/entry metric: the heap its
// impl takes per cached entry beyond the entry itself, measured on
// memoryEntries entries (see bytesPerEntry). Every family of the cache suite
// reports it, so each result file carries the memory side of the trade.
//
// The figure depends only on the implementation, so a process measures
// it once per implementation (a fork runs one case; a test runs many).
func ReportBytesPerEntry(t *harness.Trial) error {
	impl := t.Param("impl")
	memory.Lock()
	defer memory.Unlock()
	b, ok := memory.perEntry[impl]
	if !ok {
		var err error
		if b, err = bytesPerEntry(impl, memoryEntries); err != nil {
			return err
		}
		memory.perEntry[impl] = b
	}
	t.ReportMetric("B/entry", b)
	return nil
}

var memory = struct {
	sync.Mutex
	perEntry map[string]float64
}{perEntry: map[string]float64{}}

// bytesPerEntry measures the heap a cache takes per cached entry beyond
// the entries themselves: the wrapper and the removal queue's slot, which
// both implementations share, and the index (a skip-list node, or a 64th
// of a page). The entries are built before the measurement.
func bytesPerEntry(impl string, n int64) (float64, error) {
	if _, err := NewCache(impl, nil); err != nil {
		return 0, err
	}
	entries := make([]*cache.Entry, n)
	for i := range entries {
		entries[i] = cache.NewEntry(0, int64(i), nil, 0, nil)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c, _ := NewCache(impl, cache.NewRemovalQueue(0, false))
	in := c.NewInserter()
	for i, e := range entries {
		in.Put(cache.Position{Ledger: 0, Entry: int64(i)}, e, 0)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perEntry := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
	runtime.KeepAlive(c)
	c.Clear()
	return perEntry, nil
}
