package dedup

import (
	"fmt"
	"sync/atomic"

	"github.com/ledgerbench/ledgerbench/harness"
	impl "github.com/ledgerbench/ledgerbench/impl/dedup"
)

// Family is the family name.
const Family = "dedup"

// prefilled is the number of producers the maps start with.
const prefilled = 64

var params = []harness.Param{
	{Name: "impl", Values: impl.Implementations, Enum: true, Baseline: "locked"},
	{Name: "path", Values: []string{"admit", "full"}, Enum: true},
}

// newDeduplicator builds the trial's deduplicator with producer-0…63 at 0.
func newDeduplicator(t *harness.Trial) (*impl.Deduplicator, error) {
	a := impl.NewAdmission(t.Param("impl"))
	if a == nil {
		return nil, fmt.Errorf("unknown impl %q", t.Param("impl"))
	}
	for i := 0; i < prefilled; i++ {
		a.Set(fmt.Sprintf("producer-%d", i), 0)
	}
	return impl.New(a, impl.Config{}), nil
}

// bindStream returns a body that publishes producer's sequences
// first, first+step, … through the chosen path, counting admissions.
func bindStream(w *harness.Worker, d *impl.Deduplicator, path, producer string, first, step int64) func() {
	accepted := w.Counter("accepted/op")
	seq := first - step
	if path == "admit" {
		a := d.Admission()
		return func() {
			seq += step
			if ok, _ := a.Admit(producer, seq, seq); ok {
				accepted.Add(1)
			}
		}
	}
	m := &impl.Message{ProducerName: producer, ChunkID: -1}
	return func() {
		seq += step
		m.SequenceID = seq
		st, err := d.IsDuplicate(m)
		if err != nil {
			panic(err)
		}
		if st == impl.NotDup {
			accepted.Add(1)
		}
	}
}

func caseBench(name, doc string, goroutines int, producer func(id int) (string, int64, int64)) *harness.Benchmark {
	return &harness.Benchmark{
		Family: Family, Name: name, Suites: []string{"dedup"}, Doc: doc,
		Params: params, Goroutines: goroutines,
		Units: []harness.UnitInfo{{Unit: "accepted/op", Better: "higher"}},
		Setup: func(t *harness.Trial) error {
			d, err := newDeduplicator(t)
			if err != nil {
				return err
			}
			path := t.Param("path")
			t.Run(func(w *harness.Worker) (func(), error) {
				name, first, step := producer(w.ID())
				return bindStream(w, d, path, name, first, step), nil
			})
			return nil
		},
	}
}

// Benchmarks returns the family's declarations.
func Benchmarks() []*harness.Benchmark {
	return []*harness.Benchmark{
		caseBench("DedupSingle", "one goroutine publishing on its own producer", 1,
			func(int) (string, int64, int64) { return "producer-0", 1, 1 }),
		caseBench("DedupDistinct", "16 goroutines, each publishing on its own producer", 16,
			func(id int) (string, int64, int64) { return fmt.Sprintf("producer-%d", id), 1, 1 }),
		caseBench("DedupShared", "16 goroutines sharing producer-0, each with its own increasing stream", 16,
			func(id int) (string, int64, int64) { return "producer-0", int64(id) + 1, 16 }),
		harness.NoopBenchmark(Family, "DedupNoop", "dedup"),
		{
			Family: Family, Name: "DedupFloor", Suites: []string{"dedup"},
			Doc: "the unavoidable work of an accepted admission: one compare-and-swap on the caller's own word",
			Setup: func(t *harness.Trial) error {
				t.Run(func(w *harness.Worker) (func(), error) {
					var word atomic.Int64
					return func() {
						cur := word.Load()
						word.CompareAndSwap(cur, cur+1)
					}, nil
				})
				return nil
			},
		},
	}
}

func init() {
	for _, b := range Benchmarks() {
		harness.Register(b)
	}
}
