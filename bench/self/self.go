package self

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ledgerbench/ledgerbench/harness"
)

// Family is the family name of the self benchmarks.
const Family = "self"

// KernelRounds is the length of the fixed-cost kernel's dependency chain.
const KernelRounds = 64

// Kernel is a fixed-cost arithmetic kernel: a chain of KernelRounds
// dependent multiply-xorshift steps, so its cost is set by latency alone
// and does not depend on data or memory.
func Kernel(x uint64) uint64 {
	for i := 0; i < KernelRounds; i++ {
		x ^= x >> 29
		x *= 0xbf58476d1ce4e5b9
	}
	return x
}

// SpinRounds is the length of Spin's chain at extra=0: long enough that 5
// more percent is a whole number of steps.
const SpinRounds = 200

// Spin is Kernel's step repeated rounds times.
func Spin(x uint64, rounds int) uint64 {
	for i := 0; i < rounds; i++ {
		x ^= x >> 29
		x *= 0xbf58476d1ce4e5b9
	}
	return x
}

// Benchmarks returns the self suite's declarations.
func Benchmarks() []*harness.Benchmark {
	return []*harness.Benchmark{
		{
			Family: Family, Name: "Noop", Suites: []string{"self"},
			Doc: "an empty op: the harness's own cost per op",
			Setup: func(t *harness.Trial) error {
				t.Run(func(w *harness.Worker) (func(), error) {
					return func() {}, nil
				})
				return nil
			},
		},
		{
			Family: Family, Name: "Kernel", Suites: []string{"self"},
			Doc: "a fixed chain of dependent multiply-xorshift steps; compare with go test -bench BenchmarkKernelLoop",
			Setup: func(t *harness.Trial) error {
				t.Run(func(w *harness.Worker) (func(), error) {
					x := w.Rand().Uint64() | 1
					return func() {
						x = Kernel(x)
						w.Sink(x)
					}, nil
				})
				return nil
			},
		},
		{
			Family: Family, Name: "Spin", Suites: []string{"self"},
			Params: []harness.Param{{Name: "extra", Values: []string{"0", "5"}, Kind: harness.Int, Baseline: "0",
				Doc: "percent of extra work per op: 5 is a known change of +5 % for calibrating the statistics"}},
			Doc: "a chain of SpinRounds × (100+extra)/100 dependent multiply-xorshift steps: a change of known size",
			Setup: func(t *harness.Trial) error {
				extra := t.Int("extra")
				if extra < 0 || extra > 1000 {
					return fmt.Errorf("extra %d: want 0 to 1000 percent", extra)
				}
				rounds := SpinRounds * (100 + extra) / 100
				t.Run(func(w *harness.Worker) (func(), error) {
					x := w.Rand().Uint64() | 1
					return func() {
						x = Spin(x, rounds)
						w.Sink(x)
					}, nil
				})
				return nil
			},
		},
		{
			Family: Family, Name: "Mutex", Suites: []string{"self"}, Goroutines: 2,
			Doc: "every goroutine increments one counter under one sync.Mutex",
			Setup: func(t *harness.Trial) error {
				var mu sync.Mutex
				var n uint64
				t.OnTeardown(func() error { harness.Sink(n); return nil })
				t.Run(func(w *harness.Worker) (func(), error) {
					return func() {
						mu.Lock()
						n++
						mu.Unlock()
					}, nil
				})
				return nil
			},
		},
		{
			Family: Family, Name: "Alloc", Suites: []string{"self"},
			Params: []harness.Param{{Name: "size", Values: []string{"64", "1024"}, Kind: harness.Int}},
			Doc:    "allocates one byte slice of the given size per op",
			Setup: func(t *harness.Trial) error {
				size := t.Int("size")
				t.Run(func(w *harness.Worker) (func(), error) {
					var keep []byte
					return func() {
						keep = make([]byte, size)
						w.Sink(uint64(len(keep)))
					}, nil
				})
				return nil
			},
		},
		{
			Family: Family, Name: "Group", Suites: []string{"self"},
			Doc: "an asymmetric group: one writer stores to an atomic word that two readers load",
			Setup: func(t *harness.Trial) error {
				t.GroupSetup(func(g *harness.Group) error {
					g.Value = new(atomic.Uint64)
					return nil
				})
				t.Group(
					harness.Op{Name: "write", Goroutines: 1, Bind: func(w *harness.Worker) (func(), error) {
						v := w.Group().Value.(*atomic.Uint64)
						return func() { v.Add(1) }, nil
					}},
					harness.Op{Name: "read", Goroutines: 2, Bind: func(w *harness.Worker) (func(), error) {
						v := w.Group().Value.(*atomic.Uint64)
						changed := w.Counter("changes/op")
						var last uint64
						return func() {
							x := v.Load()
							if x != last {
								changed.Add(1)
								last = x
							}
						}, nil
					}},
				)
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
