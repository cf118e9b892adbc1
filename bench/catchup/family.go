package catchup

import (
	"github.com/ledgerbench/ledgerbench/bench/insert"
	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/impl/cache"
)

// Family is the family name.
const Family = "catchup"

const (
	cachedTail     = 10_000
	trimBatch      = 100
	run            = 100
	catchUpLedger  = 1
	tailLedger     = 2
	catchUpEntries = 50_000
)

type state struct {
	q    *cache.RemovalQueue
	c    cache.RangeCache
	tail func(cache.Position, *cache.Entry, int64) (bool, error)
	next int64
}

func put(f func(cache.Position, *cache.Entry, int64) (bool, error), l, e int64) {
	en := cache.NewEntry(l, e, nil, 0, nil)
	ok, err := f(cache.Position{Ledger: l, Entry: e}, en, 0)
	if err != nil {
		panic(err)
	}
	if !ok {
		en.Release()
	}
}

func catchUp() *harness.Benchmark {
	return &harness.Benchmark{
		Family: Family, Name: "CatchUp", Suites: []string{"cache"},
		Doc:    "group: tailInsert and catchUpInsertRun (100 entries at a random earlier position) on one cache",
		Params: []harness.Param{{Name: "impl", Values: insert.Impls, Enum: true, Baseline: insert.Baseline}},
		Setup: func(t *harness.Trial) error {
			impl := t.Param("impl")
			if err := insert.ReportBytesPerEntry(t); err != nil {
				return err
			}
			s := &state{}
			newPut := func() func(cache.Position, *cache.Entry, int64) (bool, error) {
				if impl == "paged" {
					return s.c.NewInserter().Put
				}
				return s.c.Put // master had no inserter
			}
			t.OnIteration(func() error {
				s.q = cache.NewRemovalQueue(0, false)
				c, err := insert.NewCache(impl, s.q)
				if err != nil {
					return err
				}
				s.c, s.next = c, 0
				s.tail = newPut()
				for ; s.next < cachedTail; s.next++ {
					put(s.tail, tailLedger, s.next)
				}
				return nil
			}, func() error {
				s.c.Clear()
				s.q.EvictBefore(1 << 62)
				return nil
			})
			t.Group(
				harness.Op{Name: "tailInsert", Goroutines: 1, Bind: func(w *harness.Worker) (func(), error) {
					return func() {
						put(s.tail, tailLedger, s.next)
						s.next++
						if s.next%trimBatch == 0 {
							s.c.RemoveRange(cache.Position{Ledger: tailLedger}, cache.Position{Ledger: tailLedger, Entry: s.next - cachedTail}, false)
							s.q.EvictBefore(-1 << 63)
						}
					}, nil
				}},
				harness.Op{Name: "catchUpInsertRun", Goroutines: 1, Bind: func(w *harness.Worker) (func(), error) {
					r := w.Rand()
					return func() {
						first := int64(r.IntN(catchUpEntries - run))
						p := newPut()
						for i := int64(0); i < run; i++ {
							put(p, catchUpLedger, first+i)
						}
						s.c.RemoveRange(cache.Position{Ledger: catchUpLedger, Entry: first}, cache.Position{Ledger: catchUpLedger, Entry: first + run}, false)
					}, nil
				}},
			)
			return nil
		},
	}
}

// floorOp is the unavoidable work of inserting n entries: allocate each,
// store its pointer in a slot, append it to a queue.
type floorOp struct {
	slots []*cache.Entry
	queue []*cache.Entry
	i     int64
}

func (f *floorOp) insert(l int64, n int) {
	for range n {
		e := cache.NewEntry(l, f.i, nil, 0, nil)
		f.slots[f.i&(1<<16-1)] = e
		if len(f.queue) == cap(f.queue) {
			f.queue = f.queue[:0]
		}
		f.queue = append(f.queue, e)
		f.i++
	}
}

// catchUpFloor is CatchUp's group with each op reduced to its floor: a
// tail insert is one entry's allocation, pointer store and queue append,
// a catch-up run a hundred of them.
func catchUpFloor() *harness.Benchmark {
	return &harness.Benchmark{
		Family: Family, Name: "CatchUpFloor", Suites: []string{"cache"},
		Doc: "CatchUp's group reduced to the unavoidable work: allocate, store a pointer, append to a queue",
		Setup: func(t *harness.Trial) error {
			newFloor := func() *floorOp {
				return &floorOp{slots: make([]*cache.Entry, 1<<16), queue: make([]*cache.Entry, 0, 1<<16)}
			}
			t.Group(
				harness.Op{Name: "tailInsert", Goroutines: 1, Bind: func(w *harness.Worker) (func(), error) {
					f := newFloor()
					return func() { f.insert(tailLedger, 1) }, nil
				}},
				harness.Op{Name: "catchUpInsertRun", Goroutines: 1, Bind: func(w *harness.Worker) (func(), error) {
					f := newFloor()
					return func() { f.insert(catchUpLedger, run) }, nil
				}},
			)
			return nil
		},
	}
}

func init() {
	harness.Register(catchUp())
	harness.Register(catchUpFloor())
	harness.Register(harness.NoopBenchmark(Family, "CatchUpNoop", "cache"))
}
