package self

import (
	"testing"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/internal/engine"
)

func BenchmarkNoop(b *testing.B)   { harness.RunDefault(b, Family+"/Noop") }
func BenchmarkKernel(b *testing.B) { harness.RunDefault(b, Family+"/Kernel") }
func BenchmarkMutex(b *testing.B)  { harness.RunDefault(b, Family+"/Mutex") }
func BenchmarkAlloc(b *testing.B)  { harness.RunDefault(b, Family+"/Alloc") }
func BenchmarkGroup(b *testing.B)  { harness.RunDefault(b, Family+"/Group") }
func BenchmarkSpin(b *testing.B)   { harness.RunDefault(b, Family+"/Spin") }

// BenchmarkKernelLoop is the fixed-cost kernel written the plain Go way,
// with b.Loop: the reference that benchctl's BenchmarkKernel must agree
// with (the harness's accuracy target, within 5 %).
func BenchmarkKernelLoop(b *testing.B) {
	x := uint64(0x9e3779b97f4a7c15)
	for b.Loop() {
		x = Kernel(x)
	}
	harness.Sink(x)
}

func TestKernelIsFixedCost(t *testing.T) {
	// The kernel is exactly KernelRounds steps of the chain: a step
	// written out here, applied that many times, gives its result, and
	// one step fewer does not. Distinct inputs give distinct outputs (it
	// is not constant).
	step := func(x uint64) uint64 { x ^= x >> 29; return x * 0xbf58476d1ce4e5b9 }
	for _, x := range []uint64{1, 2, 0x9e3779b97f4a7c15, ^uint64(0)} { // 0 is the chain's fixed point
		want, short := x, x
		for i := range KernelRounds {
			want = step(want)
			if i < KernelRounds-1 {
				short = step(short)
			}
		}
		if got := Kernel(x); got != want || got == short {
			t.Errorf("Kernel(%#x) = %#x, want %#x (%d steps)", x, got, want, KernelRounds)
		}
		if Spin(x, KernelRounds) != want {
			t.Errorf("Spin(%#x, %d) is not Kernel", x, KernelRounds)
		}
	}
	if Kernel(1) == Kernel(2) {
		t.Error("Kernel(1) == Kernel(2)")
	}
}

func TestSelfBenchmarksRegistered(t *testing.T) {
	want := []string{"Noop", "Kernel", "Spin", "Mutex", "Alloc", "Group"}
	for _, name := range want {
		b, ok := harness.Default.Lookup(Family + "/" + name)
		if !ok {
			t.Fatalf("self/%s is not registered", name)
		}
		if b.Pkg() != "github.com/ledgerbench/ledgerbench/bench/self" {
			t.Errorf("self/%s: Pkg() = %q, want the declaring package", name, b.Pkg())
		}
	}
	got, err := engine.Select(harness.Default, "self", nil)
	if err != nil || len(got) != len(want) {
		t.Fatalf("suite self has %d benchmarks (%v), want %d", len(got), err, len(want))
	}
}

func TestSpinExtraIsMoreSteps(t *testing.T) {
	// extra=5 runs 210 steps: the 200 of extra=0, then 10 more.
	x := uint64(3)
	if Spin(x, SpinRounds*105/100) != Spin(Spin(x, SpinRounds), 10) || SpinRounds*105/100 != 210 {
		t.Error("Spin at extra=5 is not Spin at extra=0 followed by 5 % more steps")
	}
}
