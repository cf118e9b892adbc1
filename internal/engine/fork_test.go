package engine_test

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/report"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/testenv"
)

// forkRegistry holds the benchmarks that the fork tests run in re-executed
// copies of this test binary: one that works and one per failure mode.
var forkRegistry = &harness.Registry{}

func simple(name string, setup func(t *harness.Trial) error, body func()) *harness.Benchmark {
	return &harness.Benchmark{Family: "fork", Name: name, Setup: func(t *harness.Trial) error {
		if setup != nil {
			if err := setup(t); err != nil {
				return err
			}
		}
		t.Run(func(w *harness.Worker) (func(), error) { return body, nil })
		return nil
	}}
}

func init() {
	var n uint64
	work := func() { n++ }
	for _, b := range []*harness.Benchmark{
		simple("Good", nil, work),
		simple("PanicSetup", func(*harness.Trial) error { panic("boom-in-setup") }, work),
		simple("PanicOp", nil, func() { panic("boom-in-op") }),
		simple("PanicTeardown", func(t *harness.Trial) error {
			t.OnTeardown(func() error { panic("boom-in-teardown") })
			return nil
		}, work),
		simple("ErrorSetup", func(*harness.Trial) error { return fmt.Errorf("no dataset at /nonexistent") }, work),
		simple("Exit", nil, func() {
			fmt.Fprintln(os.Stderr, "about to exit 7")
			os.Exit(7)
		}),
		simple("Crash", nil, func() {
			done := make(chan bool)
			go func() { panic("crash-in-a-goroutine") }()
			<-done
		}),
		simple("Hang", nil, func() {
			fmt.Fprintln(os.Stderr, "hanging now")
			select {}
		}),
		simple("Stray", func(*harness.Trial) error {
			// Stray output, even bytes that look like a frame, must not
			// reach the result link.
			fmt.Print("LB\x01\x03\x00\x00\x00\x02{}garbage on stdout\n")
			fmt.Fprint(os.Stderr, "LB\x01\x05\x00\x00\x00\x00 garbage on stderr\n")
			return nil
		}, work),
	} {
		forkRegistry.Register(b)
	}
}

func TestMain(m *testing.M) {
	if engine.IsChild() {
		if fakeChild() {
			return
		}
		os.Exit(engine.ChildMain(forkRegistry))
	}
	if parentMain() {
		return
	}
	testenv.NoExitSleep()
	os.Exit(m.Run())
}

func forkRun(t *testing.T, bench string) *result.Run {
	t.Helper()
	o := engine.DefaultOptions()
	o.Bench = bench
	o.Forks = 1
	o.Warmup = result.IterSpec{Count: 1, Time: 10 * time.Millisecond}
	o.Measure = result.IterSpec{Count: 2, Time: 10 * time.Millisecond}
	o.Timeout = 2 * time.Second
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rn := &engine.Runner{Executable: exe, LogDir: t.TempDir()}
	run, err := runPlanned(t, rn, forkRegistry, o)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func caseOf(t *testing.T, run *result.Run, name string) *result.CaseResult {
	t.Helper()
	for _, c := range run.Cases {
		if c.Case.Name() == name {
			return c
		}
	}
	t.Fatalf("no case %s", name)
	return nil
}

func TestForkFailureModes(t *testing.T) {
	for _, tc := range []struct {
		bench, phase, message, exit, tail string
		measured                          int // iterations that arrived before the failure
	}{
		{"PanicSetup", "setup", "panic: boom-in-setup", "exit status 1", "boom-in-setup", 0},
		{"ErrorSetup", "setup", "no dataset at /nonexistent", "exit status 1", "no dataset", 0},
		{"PanicOp", "op", "panic: boom-in-op", "exit status 1", "boom-in-op", 0},
		{"PanicTeardown", "teardown", "panic: boom-in-teardown", "exit status 1", "boom-in-teardown", 3},
		{"Exit", "", "the child closed its link without reporting", "exit status 7", "about to exit 7", 0},
		{"Crash", "", "the child closed its link without reporting", "exit status 2", "panic: crash-in-a-goroutine", 0},
		{"Hang", "", "hung, no report for 2s; killed", "signal: killed", "hanging now", 0},
	} {
		t.Run(tc.bench, func(t *testing.T) {
			t.Parallel()
			run := forkRun(t, "^Benchmark(Good|"+tc.bench+")$")
			if !run.Failed() {
				t.Fatal("the run did not fail")
			}
			good := caseOf(t, run, "BenchmarkGood")
			if len(good.Failures) != 0 || len(good.Iterations) != 3 {
				t.Errorf("the good benchmark: %d iterations, failures %v; want 3 and none", len(good.Iterations), good.Failures)
			}
			bad := caseOf(t, run, "Benchmark"+tc.bench)
			if len(bad.Failures) != 1 {
				t.Fatalf("%d failures, want 1", len(bad.Failures))
			}
			f := bad.Failures[0]
			if f.Phase != tc.phase || !strings.Contains(f.Message, tc.message) || f.Exit != tc.exit || f.Benchmark != "Benchmark"+tc.bench || f.Fork != 1 {
				t.Errorf("failure = phase %q message %q exit %q bench %q fork %d\nwant phase %q, message with %q, exit %q", f.Phase, f.Message, f.Exit, f.Benchmark, f.Fork, tc.phase, tc.message, tc.exit)
			}
			if tail := strings.Join(f.Tail, "\n"); !strings.Contains(tail, tc.tail) || len(f.Tail) > 20 {
				t.Errorf("stderr tail (%d lines) lacks %q:\n%s", len(f.Tail), tc.tail, tail)
			}
			if tc.phase == "op" && !strings.Contains(f.Stack, "fork_test.go") {
				t.Errorf("the panic's stack does not show the benchmark's code:\n%s", f.Stack)
			}
			if got := len(bad.Iterations); got != tc.measured {
				t.Errorf("%d iterations kept from the failed fork, want %d", got, tc.measured)
			}
			// Every result obtained is written, and the failure is recorded.
			var txt bytes.Buffer
			if err := report.WriteBenchfmt(&txt, goldenHeader(), run); err != nil {
				t.Fatal(err)
			}
			if n := len(regexp.MustCompile(`\nBenchmarkGood(-\d+)? `).FindAllString(txt.String(), -1)); n != 2 {
				t.Errorf("bench.txt holds %d BenchmarkGood lines, want 2:\n%s", n, txt.String())
			}
			if !strings.Contains(txt.String(), "# benchctl: FAILED Benchmark"+tc.bench+" fork 1: ") {
				t.Errorf("bench.txt does not record the failure:\n%s", txt.String())
			}
		})
	}
}

func TestForkStrayOutputAndStartup(t *testing.T) {
	run := forkRun(t, "^BenchmarkStray$")
	c := caseOf(t, run, "BenchmarkStray")
	if run.Failed() || len(c.Iterations) != 3 {
		t.Fatalf("stray output broke the fork: %d iterations, failures %v", len(c.Iterations), c.Failures)
	}
	if len(c.Startup) != 1 || c.Startup[0] <= 0 || len(c.Ready) != 1 || c.Ready[0] < c.Startup[0] || c.Ready[0] > time.Minute {
		t.Fatalf("fork start-up %v, ready %v: want one positive duration each, ready after hello", c.Startup, c.Ready)
	}
	t.Logf("fork start-up: exec to hello %v, exec to first iteration %v", c.Startup[0], c.Ready[0])
}

func TestForksInterleaveAndRepeat(t *testing.T) {
	o := engine.DefaultOptions()
	o.Bench = "^BenchmarkGood$"
	o.Forks = 3
	o.Warmup = result.IterSpec{}
	o.Measure = result.IterSpec{Count: 2, Ops: 1000}
	exe, _ := os.Executable()
	var order []int
	rn := &engine.Runner{Executable: exe, Progress: func(e engine.Event) {
		if e.End {
			order = append(order, e.Fork)
		}
	}}
	run, err := runPlanned(t, rn, forkRegistry, o)
	if err != nil || run.Failed() {
		t.Fatalf("run: %v %v", err, run.Cases[0].Failures)
	}
	forks := map[int]int{}
	for _, it := range run.Cases[0].Iterations {
		forks[it.Fork]++
	}
	if len(forks) != 3 || forks[1] != 2 || forks[2] != 2 || forks[3] != 2 || fmt.Sprint(order) != "[1 2 3]" {
		t.Errorf("iterations per fork %v, fork order %v; want 2 in each of forks 1-3, in order", forks, order)
	}
}

// TestForkAffinity pins the fork to one CPU and reads its affinity back
// from the child (sched_getaffinity in the child's hello).
func TestForkAffinity(t *testing.T) {
	n := runtime.NumCPU()
	if n < 2 {
		t.Skip("needs two CPUs to tell pinning from the default")
	}
	o := engine.DefaultOptions()
	o.Bench, o.Forks = "^BenchmarkGood$", 1
	o.Warmup, o.Measure = result.IterSpec{}, result.IterSpec{Count: 1, Ops: 100}
	exe, _ := os.Executable()
	rn := &engine.Runner{Executable: exe, CPUs: []int{n - 1}}
	run, err := runPlanned(t, rn, forkRegistry, o)
	if err != nil || run.Failed() {
		t.Fatalf("run: %v", err)
	}
	got := run.Cases[0].ForkCPUs
	if len(got) != 1 || fmt.Sprint(got[0]) != fmt.Sprint([]int{n - 1}) {
		t.Errorf("the child ran on CPUs %v, want [%d]", got, n-1)
	}
	// The parent's own affinity is restored.
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil || set.Count() < 2 {
		t.Errorf("the parent's affinity was not restored: %d CPUs, %v", set.Count(), err)
	}
}
