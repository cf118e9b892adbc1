package engine

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/gotest"
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
	dir, _ := filepath.Abs(filepath.Join("..", "..", "benchctl", "testdata", "gobench"))
	const pkg = "example.com/gobench/setup"
	pkgs, err := gotest.Packages(ctx, dir, []string{pkg})
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "setup.test")
	if err := gotest.Build(ctx, dir, pkgs[0], bin, ""); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Forks, o.Warmup, o.Measure = 3, GoTestWarmup, result.IterSpec{Count: 3, Time: 50 * time.Millisecond}
	c := Case{Test: &GoTest{Pkg: pkg, Name: "BenchmarkRebuild", Procs: 1}}
	side := Side{Launch: TestBinaries{pkg: {Path: bin, Dir: pkgs[0].Dir}}}
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
