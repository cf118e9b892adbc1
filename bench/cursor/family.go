package cursor

import (
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/ledgerbench/ledgerbench/harness"
	impl "github.com/ledgerbench/ledgerbench/impl/cursor"
)

// Family is the family name.
const Family = "cursor"

var (
	implParam    = harness.Param{Name: "impl", Values: impl.Implementations, Enum: true, Baseline: "sortedset"}
	cursorsParam = harness.Param{Name: "cursors", Values: []string{"10", "100", "500"}, Kind: harness.Int}
	ratioParam   = harness.Param{Name: "ratio", Values: []string{"0", "1", "10", "100"}, Kind: harness.Int}
)

// state is the trial's container and its cursors' read positions.
type state struct {
	c     impl.Container
	names []string
	pos   []atomic.Int64 // entry IDs in ledger 0
}

func newState(t *harness.Trial) (*state, error) {
	c, err := impl.New(t.Param("impl"))
	if err != nil {
		return nil, err
	}
	n := t.Int("cursors")
	s := &state{c: c, names: make([]string, n), pos: make([]atomic.Int64, n)}
	for i := range n {
		s.names[i] = "cursor" + strconv.Itoa(i+1)
		s.pos[i].Store(int64(i + 1))
		if err := c.Add(s.names[i], impl.Position{Ledger: 0, Entry: int64(i + 1)}); err != nil {
			return nil, err
		}
	}
	if err := s.check(true); err != nil {
		return nil, err
	}
	t.OnTeardown(func() error { return s.check(t.Goroutines() == 1) })
	return s, nil
}

// check is JMH's checkOrderingAndNumberOfCursorsState: the size is the
// number of cursors and the slowest position is the lowest cursor's
// (exact), or at or before it when goroutines raced on one cursor: its
// positions only grow, so an update applied out of order leaves the
// container behind the array, never ahead of it.
func (s *state) check(exact bool) error {
	if got := s.c.Size(); got != len(s.names) {
		return fmt.Errorf("container holds %d cursors, want %d", got, len(s.names))
	}
	slow, ok := s.c.Slowest()
	if !ok {
		return fmt.Errorf("no slowest cursor among %d", len(s.names))
	}
	low := s.pos[0].Load()
	for i := range s.pos {
		low = min(low, s.pos[i].Load())
	}
	if slow.Ledger != 0 || slow.Entry > low || (exact && slow.Entry != low) {
		return fmt.Errorf("slowest position %d:%d, lowest cursor at 0:%d", slow.Ledger, slow.Entry, low)
	}
	return nil
}

// count returns what the Java benchmark returns: the count every ratio-th
// op when the implementation can count, else the entry ID.
func count(c impl.Container, name string, entry int64, ratio int, counter int64, counted *harness.Counter) int64 {
	if ratio > 0 && counter%int64(ratio) == 0 {
		if n, ok := c.CountAtOrBefore(name); ok {
			counted.Add(1)
			return int64(n)
		}
	}
	return entry
}

// newBenchmark declares a thrpt benchmark of the family; counting ones
// take the ratio parameter and report counted/op.
func newBenchmark(name, doc string, goroutines int, counting bool, setup func(*harness.Trial) error) *harness.Benchmark {
	b := &harness.Benchmark{
		Family: Family, Name: name, Suites: []string{"cursor"}, Mode: harness.Throughput,
		Goroutines: goroutines, Doc: doc, Setup: setup,
		Params: []harness.Param{implParam, cursorsParam},
	}
	if counting {
		b.Params = append(b.Params, ratioParam)
		b.Units = []harness.UnitInfo{{Unit: "counted/op", Better: "higher"}}
	}
	return b
}

func seekForward(name string, goroutines int) *harness.Benchmark {
	doc := fmt.Sprintf("%d goroutine(s) seek random cursors 1-99 entries forward, counting every ratio-th op", goroutines)
	return newBenchmark(name, doc, goroutines, true, func(t *harness.Trial) error {
		s, err := newState(t)
		if err != nil {
			return err
		}
		ratio := t.Int("ratio")
		t.Run(func(w *harness.Worker) (func(), error) {
			r := w.Rand()
			counted := w.Counter("counted/op")
			var counter int64
			return func() {
				i := r.IntN(len(s.names))
				to := s.pos[i].Add(1 + r.Int64N(99))
				if err := s.c.Update(s.names[i], impl.Position{Ledger: 0, Entry: to}); err != nil {
					panic(err)
				}
				w.Sink(uint64(count(s.c, s.names[i], to, ratio, counter, counted)))
				counter++
			}, nil
		})
		return nil
	})
}

func slowest(name string, goroutines int) *harness.Benchmark {
	doc := fmt.Sprintf("%d goroutine(s) read the slowest cursor's position", goroutines)
	return newBenchmark(name, doc, goroutines, false, func(t *harness.Trial) error {
		s, err := newState(t)
		if err != nil {
			return err
		}
		t.Run(func(w *harness.Worker) (func(), error) {
			return func() {
				p, ok := s.c.Slowest()
				if !ok {
					panic("no slowest cursor")
				}
				w.Sink(uint64(p.Entry))
			}, nil
		})
		return nil
	})
}

// churn removes the oldest cursor and adds "churn<counter>" after the
// newest, so the positions stay distinct and the size constant. The
// positions array is not used: names and positions rotate in a ring.
func churn() *harness.Benchmark {
	doc := "remove the oldest cursor and add a new one after the newest, counting every ratio-th op"
	return newBenchmark("Churn", doc, 1, true, func(t *harness.Trial) error {
		s, err := newState(t)
		if err != nil {
			return err
		}
		ratio := t.Int("ratio")
		n := len(s.names)
		t.Run(func(w *harness.Worker) (func(), error) {
			counted := w.Counter("counted/op")
			var counter int64
			next := int64(n + 1)
			oldest := 0
			return func() {
				if !s.c.Remove(s.names[oldest]) {
					panic("churn: " + s.names[oldest] + " was not tracked")
				}
				name := "churn" + strconv.FormatInt(counter, 10)
				if err := s.c.Add(name, impl.Position{Ledger: 0, Entry: next}); err != nil {
					panic(err)
				}
				s.names[oldest] = name
				s.pos[oldest].Store(next)
				oldest = (oldest + 1) % n
				w.Sink(uint64(count(s.c, name, next, ratio, counter, counted)))
				next++
				counter++
			}, nil
		})
		return nil
	})
}

func init() {
	harness.Register(seekForward("SeekForward01", 1))
	harness.Register(seekForward("SeekForward10", 10))
	harness.Register(slowest("Slowest01", 1))
	harness.Register(slowest("Slowest10", 10))
	harness.Register(churn())
	harness.Register(harness.NoopBenchmark(Family, "CursorNoop", "cursor"))
}
