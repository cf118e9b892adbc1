package harness_test

import (
	"flag"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
)

func noop(t *harness.Trial) error {
	t.Run(func(*harness.Worker) (func(), error) { return func() {}, nil })
	return nil
}

// TestRegisterRecordsThePackage: the pkg of a benchmark is the import path
// of the package whose code called Register, with either entry point.
func TestRegisterRecordsThePackage(t *testing.T) {
	r := &harness.Registry{}
	b := &harness.Benchmark{Family: "pkgtest", Name: "PkgOf", Setup: noop}
	r.Register(b)
	if got, want := b.Pkg(), "github.com/ledgerbench/ledgerbench/harness_test"; got != want {
		t.Errorf("Pkg() = %q, want %q", got, want)
	}
}

// TestRegisterBadInput: every invalid declaration panics with a message
// naming the benchmark and what is wrong.
func TestRegisterBadInput(t *testing.T) {
	for _, tc := range []struct {
		b    *harness.Benchmark
		want string
	}{
		{&harness.Benchmark{Family: "t", Name: "Twice", Setup: noop}, "benchmark t/Twice is registered twice"},
		{&harness.Benchmark{Family: "u", Name: "Twice", Setup: noop}, "benchmark name Twice is used by two families: t and u"},
		{&harness.Benchmark{Family: "t", Name: "Empty", Suites: []string{""}, Setup: noop}, `Empty: suite name "" must be a letter`},
		{&harness.Benchmark{Family: "t", Name: "Spaced", Suites: []string{"my suite"}, Setup: noop}, `Spaced: suite name "my suite" must be a letter`},
		{&harness.Benchmark{Family: "t", Name: "bad name", Setup: noop}, `benchmark name "bad name" is not an identifier`},
		{&harness.Benchmark{Family: "t", Name: "NoSetup"}, "NoSetup: Setup is nil"},
		{&harness.Benchmark{Family: "t", Name: "P", Params: []harness.Param{{Name: "n", Values: []string{"x"}, Kind: harness.Int}}, Setup: noop}, `parameter n: value "x" is not a valid int`},
	} {
		r := &harness.Registry{}
		r.Register(&harness.Benchmark{Family: "t", Name: "Twice", Setup: noop})
		func() {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, tc.want) {
					t.Errorf("Register(%s/%s): panic %q, want %q", tc.b.Family, tc.b.Name, msg, tc.want)
				}
			}()
			r.Register(tc.b)
		}()
	}
	// Any well-formed suite name is a suite: no list of names lives here.
	r := &harness.Registry{}
	r.Register(&harness.Benchmark{Family: "t", Name: "Mine", Suites: []string{"counter", "my-suite.v2"}, Setup: noop})
}

// recorder is a benchmark whose Setup records each parameter value and
// goroutine count it ran with.
type recorder struct {
	mu         sync.Mutex
	sizes      []string
	goroutines []int
}

func (r *recorder) bench(goroutines int) *harness.Benchmark {
	return &harness.Benchmark{Family: "rb", Name: "Rec", Goroutines: goroutines,
		Params: []harness.Param{{Name: "size", Values: []string{"1", "2"}, Kind: harness.Int}},
		Setup: func(t *harness.Trial) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			if !slices.Contains(r.sizes, t.Param("size")) {
				r.sizes = append(r.sizes, t.Param("size"))
			}
			t.Run(func(w *harness.Worker) (func(), error) {
				r.mu.Lock()
				defer r.mu.Unlock()
				if w.ID() == 0 {
					r.goroutines = append(r.goroutines, w.Trial().Goroutines())
				}
				return func() {}, nil
			})
			return nil
		}}
}

func setBenchtime(t *testing.T) {
	t.Helper()
	f := flag.Lookup("test.benchtime")
	old := f.Value.String()
	f.Value.Set("50x")
	t.Cleanup(func() { f.Value.Set(old) })
}

// TestRunBOverrides: BENCHCTL_P replaces the declared values under go test.
func TestRunBOverrides(t *testing.T) {
	setBenchtime(t)
	t.Setenv(harness.ParamsEnv, "size=3,4")
	var r recorder
	testing.Benchmark(func(b *testing.B) { harness.RunB(b, r.bench(0)) })
	if !slices.Equal(r.sizes, []string{"3", "4"}) {
		t.Errorf("ran sizes %v, want [3 4]", r.sizes)
	}
	// A name no benchmark declares fails before anything runs.
	t.Setenv(harness.ParamsEnv, "nosuch=1")
	r = recorder{}
	res := testing.Benchmark(func(b *testing.B) { harness.RunB(b, r.bench(0)) })
	if len(r.sizes) != 0 || res.N != 0 {
		t.Errorf("an unknown parameter ran %v (N=%d)", r.sizes, res.N)
	}
}

// TestRunBCPU: under go test -cpu a benchmark that fixes no goroutine
// count runs GOMAXPROCS goroutines; one that fixes it keeps its count.
func TestRunBCPU(t *testing.T) {
	setBenchtime(t)
	cpu := flag.Lookup("test.cpu")
	old := cpu.Value.String()
	cpu.Value.Set("3")
	t.Cleanup(func() { cpu.Value.Set(old) })
	prev := runtime.GOMAXPROCS(3) // what testing sets for -cpu 3
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	var free, fixed recorder
	testing.Benchmark(func(b *testing.B) { harness.RunB(b, free.bench(0)) })
	testing.Benchmark(func(b *testing.B) { harness.RunB(b, fixed.bench(2)) })
	if len(free.goroutines) == 0 || slices.ContainsFunc(free.goroutines, func(n int) bool { return n != 3 }) {
		t.Errorf("-cpu 3, no fixed count: goroutines %v, want 3", free.goroutines)
	}
	if len(fixed.goroutines) == 0 || slices.ContainsFunc(fixed.goroutines, func(n int) bool { return n != 2 }) {
		t.Errorf("-cpu 3, Goroutines 2: goroutines %v, want 2", fixed.goroutines)
	}
}
