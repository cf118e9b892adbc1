package engine

import (
	"context"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/gotest"
	"github.com/ledgerbench/ledgerbench/internal/profile"
	"github.com/ledgerbench/ledgerbench/internal/testenv"
)

// TestLaterForksReuseTheFoundN: a side's first fork of a go test benchmark
// finds b.N for the measurement's time as go test does, ramping in every
// count; its later forks run at the median b.N of its counts, so each
// count calls the benchmark twice (b.N = 1, then b.N) and pays its setup
// twice, not once per ramp step. The fixture counts its calls in the
// process and reports them with each result line.
func TestLaterForksReuseTheFoundN(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not installed")
	}
	ctx := context.Background()
	const pkg = "example.com/gobench/setup"
	tb := gobenchBinary(t, pkg)
	o := DefaultOptions()
	o.Forks, o.Warmup, o.Measure = 3, GoTestWarmup, result.IterSpec{Count: 3, Time: 50 * time.Millisecond}
	c := Case{Test: &GoTest{Pkg: pkg, Name: "BenchmarkRebuild", Procs: 1}}
	side := Side{Launch: TestBinaries{pkg: tb}}
	runs, err := (&Runner{}).RunSides(ctx, o, []Case{c}, []Side{side})
	if err != nil {
		t.Fatal(err)
	}
	cr := runs[0].Cases[0]
	if len(cr.Failures) > 0 || len(cr.Iterations) != 9 {
		t.Fatalf("%d iterations, failures %v", len(cr.Iterations), cr.Failures)
	}
	var first []int64
	for _, it := range cr.Iterations {
		if it.Fork == 1 {
			first = append(first, it.Executed)
		}
	}
	want := fmt.Sprintf("%dx", medianN(first))
	if got := forkBenchtime(o, cr); got != want {
		t.Errorf("benchtime after the forks: %s, want the first fork's median b.N %s", got, want)
	}
	for _, it := range cr.Iterations {
		calls := it.Total.Metrics["calls"]
		switch {
		case it.Fork == 1 && calls < float64(3*(it.Index+1)):
			// A ramp of 50 ms from b.N = 1 calls it at least 3 times a count.
			t.Errorf("fork 1 count %d: %v calls so far, want a ramp (≥ %d)", it.Index+1, calls, 3*(it.Index+1))
		case it.Fork > 1 && (calls != float64(2*(it.Index+1)) || fmt.Sprintf("%dx", it.Executed) != want):
			t.Errorf("fork %d count %d: b.N %d after %v calls, want b.N %s after %d (b.N = 1, then b.N, per count)",
				it.Fork, it.Index+1, it.Executed, calls, want, 2*(it.Index+1))
		}
	}
	o.Measure.Ops = 1000
	if got := forkBenchtime(o, cr); got != "1000x" {
		t.Errorf("a measurement of fixed ops ran at %s, want its own 1000x", got)
	}
}

func medianN(ns []int64) int64 {
	s := slices.Clone(ns)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestProfileNSizesTheWindow: a go test profiling fork's b.N covers one
// measured iteration's time at the case's speed: this run's when it
// measured, else the one NsPerOp gives (an explanation's forks measure
// nothing), else 1; a measurement by ops is its ops.
func TestProfileNSizesTheWindow(t *testing.T) {
	c := Case{Test: &GoTest{Pkg: "tiny", Name: "BenchmarkWork"}}
	measured := &result.CaseResult{Case: c.Result(), Iterations: []result.Iteration{{Total: result.OpStats{NsPerOp: 1000}}}}
	bare := &result.CaseResult{Case: c.Result()}
	o := Options{Measure: result.IterSpec{Count: 1, Time: time.Second}}
	if n := profileN(o, measured); n != 1_000_000 {
		t.Errorf("measured at 1µs/op: b.N %d, want 1e6", n)
	}
	if n := profileN(o, bare); n != 1 {
		t.Errorf("nothing known: b.N %d, want 1", n)
	}
	o.NsPerOp = map[string]float64{bare.Case.Name(): 500}
	if n := profileN(o, bare); n != 2_000_000 {
		t.Errorf("NsPerOp 500: b.N %d, want 2e6", n)
	}
	o.Measure = result.IterSpec{Count: 1, Ops: 300}
	if n := profileN(o, bare); n != 300 {
		t.Errorf("measured by ops: b.N %d, want 300", n)
	}
}

// TestGoTestCPUSampledByPerf: with PerfSampling, a go test benchmark's
// cpu profiling fork runs its test binary (go test -c keeps its symbols)
// under perf record at a fixed b.N sized for the sampled window, and its
// profile holds perf's samples inside the benchmark's loop, named as
// pprof names them (Sum inlined into the benchmark), over b.N + 1 ops.
func TestGoTestCPUSampledByPerf(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not installed")
	}
	if ok, why := profile.SampleStatus(); !ok {
		testenv.Missing(t, "perf cannot sample here: "+why)
	}
	ctx := context.Background()
	const pkg = "example.com/gobench/calc"
	tb := gobenchBinary(t, pkg)
	c := Case{Test: &GoTest{Pkg: pkg, Name: "BenchmarkSumN", Procs: 1}}
	o := DefaultOptions()
	o.Profiles, o.PerfSampling, o.Measure = []profile.Kind{profile.CPU}, true, result.IterSpec{Count: 5, Time: time.Second}
	o.NsPerOp = map[string]float64{c.Result().Name(): 50}
	runs, err := (&Runner{ProfileDir: t.TempDir()}).ProfileSides(ctx, o, []Case{c}, []Side{{Name: "base", Launch: TestBinaries{pkg: tb}}})
	if err != nil {
		t.Fatal(err)
	}
	pr := runs[0].Cases[0].Profiles[0]
	if pr.Err != nil || pr.Ops != int64(SampledWindow/50)+1 {
		t.Fatalf("%+v: want b.N %d (the sampled window at 50 ns/op) and run1's op", pr, int64(SampledWindow/50))
	}
	p, err := profile.Read(pr.Path)
	if err != nil {
		t.Fatal(err)
	}
	var all, bench int64
	for _, s := range p.Sample {
		all += s.Value[0]
		for _, l := range s.Location[0].Line {
			if strings.HasPrefix(l.Function.Name, "example.com/gobench/calc.") {
				bench += s.Value[0]
				break
			}
		}
	}
	if p.Period != profile.SamplePeriod || all < 1000 || float64(bench) < 0.8*float64(all) {
		t.Errorf("period %d ns, %d samples, %d of them in calc: want perf's, over 1000, 80 %% in the benchmark", p.Period, all, bench)
	}
}

// gobenchBinary builds the test binary of pkg, a package of the CLI's
// testdata module of go test benchmarks.
func gobenchBinary(t *testing.T, pkg string) TestBinary {
	t.Helper()
	ctx := context.Background()
	dir, _ := filepath.Abs(filepath.Join("..", "..", "benchctl", "testdata", "gobench"))
	pkgs, err := gotest.Packages(ctx, dir, []string{pkg})
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), path.Base(pkg)+".test")
	if err := gotest.Build(ctx, dir, pkgs[0], bin, ""); err != nil {
		t.Fatal(err)
	}
	return TestBinary{Path: bin, Dir: pkgs[0].Dir}
}

// TestProfileRoundsPlansTheSampledWindow: five CPU profiling rounds of a
// 5x1s measurement take 5 s windows under runtime/pprof, and perf's
// sampled window (stretched by a third, and converted) where perf
// samples; allocation forks keep their window.
func TestProfileRoundsPlansTheSampledWindow(t *testing.T) {
	o := Options{Warmup: result.IterSpec{Count: 1, Time: 500 * time.Millisecond}, Measure: result.IterSpec{Count: 5, Time: time.Second}, ProfileRounds: 5}
	fork := func(measure time.Duration) time.Duration {
		return 2 * 5 * (500*time.Millisecond + measure + 100*time.Millisecond)
	}
	if got, want := ProfileRounds(o, profile.CPU, 1), fork(5*time.Second); got != want {
		t.Errorf("runtime/pprof: %s, want %s", got, want)
	}
	o.PerfSampling = true
	if got, want := ProfileRounds(o, profile.Allocs, 1), fork(5*time.Second); got != want {
		t.Errorf("allocations: %s, want %s", got, want)
	}
	if ok, why := profile.SampleStatus(); !ok {
		testenv.Missing(t, "perf cannot sample here: "+why)
	}
	if got, want := ProfileRounds(o, profile.CPU, 2), 2*fork(SampledWindow*4/3+sampledConversion); got != want {
		t.Errorf("sampled by perf, 2 cases: %s, want %s", got, want)
	}
}
