package harness_test

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
)

// counter is the code under test of the examples: two implementations of
// one interface, chosen by a parameter.
type counter interface{ Add(n int64) int64 }

type mutexCounter struct {
	mu sync.Mutex
	n  int64
}

func (c *mutexCounter) Add(n int64) int64 { c.mu.Lock(); defer c.mu.Unlock(); c.n += n; return c.n }

type atomicCounter struct{ n atomic.Int64 }

func (c *atomicCounter) Add(n int64) int64 { return c.n.Add(n) }

func newCounter(impl string) counter {
	if impl == "mutex" {
		return &mutexCounter{}
	}
	return &atomicCounter{}
}

// Declaring a benchmark: a name, a suite of the author's choosing, a
// parameter, and Setup, which builds the shared state once per fork and
// declares the op. Register (usually from an init function) records the
// declaring package as the results' pkg key.
func Example() {
	r := &harness.Registry{} // programs use harness.Register and harness.Default
	r.Register(&harness.Benchmark{
		Family: "counter", Name: "Add", Suites: []string{"counter"},
		Params: []harness.Param{{Name: "impl", Values: []string{"mutex", "atomic"}, Enum: true}},
		Setup: func(t *harness.Trial) error {
			c := newCounter(t.Param("impl"))
			t.Run(func(w *harness.Worker) (func(), error) {
				return func() { w.Sink(uint64(c.Add(1))) }, nil
			})
			return nil
		},
	})
	for _, b := range r.Benchmarks() {
		fmt.Println(b.FullName(), b.ID(), b.Suites, b.Pkg())
	}
	// Output: BenchmarkAdd counter/Add [counter] github.com/ledgerbench/ledgerbench/harness_test
}

// RunB runs a declaration under go test -bench, one sub-benchmark per
// parameter point, named as benchctl names it ("BenchmarkAdd/impl=mutex").
// In a _test.go file the wrapper is
//
//	func BenchmarkAdd(b *testing.B) { harness.RunB(b, addBench) }
func ExampleRunB() {
	seen := map[string]bool{}
	add := &harness.Benchmark{
		Family: "counter", Name: "Add",
		Params: []harness.Param{{Name: "impl", Values: []string{"mutex", "atomic"}, Enum: true}},
		Setup: func(t *harness.Trial) error {
			seen[t.Param("impl")] = true
			c := newCounter(t.Param("impl"))
			t.Run(func(w *harness.Worker) (func(), error) {
				return func() { w.Sink(uint64(c.Add(1))) }, nil
			})
			return nil
		},
	}
	testing.Benchmark(func(b *testing.B) { harness.RunB(b, add) })
	fmt.Println(slices.Sorted(maps.Keys(seen)))
	// Output: [atomic mutex]
}

// A group runs different ops concurrently on shared state (JMH's @Group):
// here one goroutine adds while another reads. Each op is reported on its
// own ("add-ns/op", "read-ns/op" under go test), and a worker's Counter is
// a custom metric per op.
func ExampleTrial_Group() {
	contended := &harness.Benchmark{
		Family: "counter", Name: "AddWhileReading",
		Units: []harness.UnitInfo{{Unit: "adds/op", Better: "higher"}},
		Setup: func(t *harness.Trial) error {
			c := &atomicCounter{}
			t.Group(
				harness.Op{Name: "add", Bind: func(w *harness.Worker) (func(), error) {
					return func() { w.Sink(uint64(c.Add(1))) }, nil
				}},
				harness.Op{Name: "read", Bind: func(w *harness.Worker) (func(), error) {
					reads := w.Counter("adds/op") // how many adds each read saw, per read
					last := int64(0)
					return func() {
						n := c.Add(0)
						reads.Add(n - last)
						last = n
					}, nil
				}},
			)
			return nil
		},
	}
	r := testing.Benchmark(func(b *testing.B) { harness.RunB(b, contended) })
	fmt.Println(slices.Sorted(maps.Keys(r.Extra)))
	// Output: [B/op add-ns/op adds/op allocs/op ns/op read-ns/op]
}
