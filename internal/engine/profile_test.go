package engine_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/engine"
	"github.com/ledgerbench/ledgerbench/internal/profile"
	"github.com/ledgerbench/ledgerbench/internal/testenv"
)

//go:noinline
func contendBeforeWindow(mu *sync.Mutex) {
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				mu.Lock()
				time.Sleep(10 * time.Microsecond)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

//go:noinline
func contendInWindow(mu *sync.Mutex, n *int) {
	mu.Lock()
	*n++
	for i := 0; i < 50; i++ {
		*n += i
	}
	mu.Unlock()
}

// allocOne allocates 24 bytes on the heap (its result escapes).
//
//go:noinline
func allocOne() []byte { return make([]byte, 24) }

//go:noinline
func spinKernel(x uint64) uint64 {
	for i := 0; i < 200; i++ {
		x ^= x >> 29
		x *= 0xbf58476d1ce4e5b9
	}
	return x
}

func init() {
	forkRegistry.Register(&harness.Benchmark{Family: "fork", Name: "Contended", Goroutines: 4, Setup: func(t *harness.Trial) error {
		var setupMu, mu sync.Mutex
		contendBeforeWindow(&setupMu) // a known contention before the window
		n := 0
		t.Run(func(w *harness.Worker) (func(), error) { return func() { contendInWindow(&mu, &n) }, nil })
		return nil
	}})
	forkRegistry.Register(&harness.Benchmark{Family: "fork", Name: "AllocOne", Goroutines: 2, Setup: func(t *harness.Trial) error {
		t.Run(func(w *harness.Worker) (func(), error) {
			var kept []byte // each worker's own
			return func() { kept = allocOne(); w.Sink(uint64(len(kept))) }, nil
		})
		return nil
	}})
	forkRegistry.Register(&harness.Benchmark{Family: "fork", Name: "Spin", Setup: func(t *harness.Trial) error {
		t.Run(func(w *harness.Worker) (func(), error) {
			x := uint64(3)
			return func() { x = spinKernel(x); w.Sink(x) }, nil
		})
		return nil
	}})
}

func profiledRun(t *testing.T, bench string, kinds ...profile.Kind) *result.Run {
	t.Helper()
	return runProfiled(t, profiledOptions(bench, kinds...))
}

// profiledOptions are a run of one fork of bench, 2 × 100 ms measured,
// then one profiling fork of each of kinds.
func profiledOptions(bench string, kinds ...profile.Kind) engine.Options {
	o := engine.DefaultOptions()
	o.Bench, o.Forks, o.Profiles = bench, 1, kinds
	o.Warmup = result.IterSpec{Count: 1, Time: 20 * time.Millisecond}
	o.Measure = result.IterSpec{Count: 2, Time: 100 * time.Millisecond}
	o.Timeout = time.Minute
	return o
}

// runProfiled runs o on this test binary's benchmarks.
func runProfiled(t *testing.T, o engine.Options) *result.Run {
	t.Helper()
	exe, _ := os.Executable()
	rn := &engine.Runner{Executable: exe, ProfileDir: t.TempDir()}
	run, err := runPlanned(t, rn, forkRegistry, o)
	if err != nil {
		t.Fatal(err)
	}
	if run.Failed() {
		t.Fatalf("run failed: %v", run.Cases[0].Failures)
	}
	return run
}

func summaryOf(t *testing.T, run *result.Run, k profile.Kind) *profile.Summary {
	t.Helper()
	for _, pr := range run.Cases[0].Profiles {
		if pr.Kind != string(k) {
			continue
		}
		if pr.Err != nil {
			t.Fatalf("%s fork: %v", k, pr.Err)
		}
		s, err := profile.Summarize(pr.Path, k, pr.Ops)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	t.Fatalf("no %s profile", k)
	return nil
}

func hasFrame(s *profile.Summary, suffix string) (profile.Entry, bool) {
	for _, e := range s.Top {
		if strings.HasSuffix(e.Frame, suffix) {
			return e, true
		}
	}
	return profile.Entry{}, false
}

func TestBlockAndMutexProfilesCoverTheWindowOnly(t *testing.T) {
	run := profiledRun(t, "^BenchmarkContended$", profile.Block, profile.Mutex)
	for _, k := range []profile.Kind{profile.Block, profile.Mutex} {
		s := summaryOf(t, run, k)
		e, ok := hasFrame(s, "contendInWindow")
		if !ok || e.Value <= 0 || e.Count <= 0 {
			t.Errorf("%s: the contended frame is missing or zero: %+v", k, s.Top)
		}
		if _, ok := hasFrame(s, "contendBeforeWindow"); ok {
			t.Errorf("%s: contention from before the window is in the profile: %+v", k, s.Top)
		}
	}
}

// TestAllocsProfileCountsEveryOpOfItsWindow: an allocation profile is the
// difference of two snapshots around the measurement iterations, so it
// holds the ops the workers ran outside their timed windows too (ramp-up
// while the others start, ramp-down while they finish); its ops are every
// op executed, and an op that allocates one object of 24 bytes then counts
// exactly that. Counted by the measured ops alone, the two workers' short
// iterations put their ramps' ops into the per-op figure.
func TestAllocsProfileCountsEveryOpOfItsWindow(t *testing.T) {
	o := profiledOptions("^BenchmarkAllocOne$", profile.Allocs)
	o.Warmup = result.IterSpec{Count: 1, Time: 5 * time.Millisecond}
	o.Measure = result.IterSpec{Count: 10, Time: 5 * time.Millisecond}
	s := summaryOf(t, runProfiled(t, o), profile.Allocs)
	e, ok := hasFrame(s, "allocOne")
	if !ok || math.Abs(e.Count-1) > 1e-9 || math.Abs(e.Value-24) > 24e-9 {
		t.Errorf("allocOne: %+v (found %v), want 1 object and 24 B an op exactly", e, ok)
	}
}

func TestCPUProfileNamesTheKernel(t *testing.T) {
	run := profiledRun(t, "^BenchmarkSpin$", profile.CPU)
	s := summaryOf(t, run, profile.CPU)
	if len(s.Top) == 0 || !strings.HasSuffix(s.Top[0].Frame, "spinKernel") || s.Top[0].Share < 0.5 {
		t.Errorf("top CPU frames %+v: want spinKernel first with most samples", s.Top)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(s.Path), "cpu.pb.gz")); err != nil || !strings.Contains(s.Path, "BenchmarkSpin") {
		t.Errorf("profile path %s", s.Path)
	}
	// The fork says which toolchain built it: explain compares two sides'
	// toolchains by it.
	for _, pr := range run.Cases[0].Profiles {
		if pr.GoVersion != runtime.Version() {
			t.Errorf("%s profiling fork: GoVersion %q, want the program's %q", pr.Kind, pr.GoVersion, runtime.Version())
		}
	}
}

// TestProfilingLeavesResultsAlone: a run with profilers has the same
// measured iterations, in count and shape, as one without.
func TestProfilingLeavesResultsAlone(t *testing.T) {
	plain := profiledRun(t, "^BenchmarkSpin$")
	prof := profiledRun(t, "^BenchmarkSpin$", profile.CPU, profile.Allocs)
	a, b := plain.Cases[0].Iterations, prof.Cases[0].Iterations
	if len(a) != len(b) || len(prof.Cases[0].Profiles) != 2 {
		t.Fatalf("%d iterations without profiling, %d with (and %d profiles)", len(a), len(b), len(prof.Cases[0].Profiles))
	}
	for i := range a {
		if a[i].Fork != b[i].Fork || a[i].Index != b[i].Index || a[i].Warmup != b[i].Warmup ||
			a[i].Total.Workers != b[i].Total.Workers || !reflect.DeepEqual(keys(a[i].Total.Metrics), keys(b[i].Total.Metrics)) {
			t.Errorf("iteration %d differs in shape: %+v vs %+v", i, a[i], b[i])
		}
	}
}

func keys(m map[string]float64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestSummarizeBadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pb.gz")
	os.WriteFile(path, []byte("not a profile"), 0o644)
	if _, err := profile.Summarize(path, profile.CPU, 1); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Summarize of garbage = %v, want an error naming %s", err, path)
	}
	if _, err := profile.ParseKinds("cpu,heap"); err == nil || !strings.Contains(err.Error(), "valid: cpu, offcpu, block, mutex, allocs, instructions, perf") {
		t.Errorf("ParseKinds: %v", err)
	}
}

// TestPerfCountsTheMeasuredLoopOnly runs --prof perf with software events
// (these VMs have no hardware counters): task-clock per op must match the
// op's own time, which it would exceed many times over if perf counted the
// fork's start-up and setup too.
func TestPerfCountsTheMeasuredLoopOnly(t *testing.T) {
	events := []string{"task-clock", "context-switches"}
	testenv.MustHave(t, "perf") // CI installs it
	if ok, why := profile.PerfStatus(events); !ok {
		// Installed, but this kernel does not let it count (a VM's
		// perf_event_paranoid, say): the machine's limit, not a tool
		// missing.
		t.Skip(why)
	}
	o := engine.DefaultOptions()
	o.Bench, o.Forks, o.Profiles, o.PerfEvents, o.InstructionOps = "^BenchmarkSpin$", 1, []profile.Kind{profile.Perf}, events, 50000
	o.Warmup = result.IterSpec{}
	o.Measure = result.IterSpec{Count: 1, Ops: 50000}
	exe, _ := os.Executable()
	rn := &engine.Runner{Executable: exe, ProfileDir: t.TempDir()}
	run, err := runPlanned(t, rn, forkRegistry, o)
	if err != nil || run.Failed() {
		t.Fatalf("run: %v %v", err, run.Cases[0].Failures)
	}
	if len(run.ProfileNotes) > 0 {
		t.Fatalf("notes: %v", run.ProfileNotes)
	}
	pr := run.Cases[0].Profiles[0]
	if pr.Err != nil {
		t.Fatal(pr.Err)
	}
	nsPerOp := run.Cases[0].Iterations[0].Total.NsPerOp
	taskNs := pr.Counters["task-clock"] * 1e6 // perf reports msec
	t.Logf("measured %.1f ns/op; perf task-clock %.1f ns/op", nsPerOp, taskNs)
	// The measured fork and the perf fork are two processes, run at two
	// moments: under the -race suite's load their CPU per op once differed
	// by 1.7×, so the bound is 2.5× (counting the start-up and setup too
	// exceeds the loop's time many times over).
	if taskNs <= 0 || taskNs > 2.5*nsPerOp {
		t.Errorf("task-clock %.1f ns/op against %.1f ns/op measured: perf counted outside the loop", taskNs, nsPerOp)
	}
}

// TestProfileSidesInRounds: ProfileSides runs only profiling forks, the
// rounds of each case on both sides, each in its own file.
func TestProfileSidesInRounds(t *testing.T) {
	o := engine.DefaultOptions()
	o.Bench, o.Forks, o.Profiles, o.ProfileRounds = "^BenchmarkSpin$", 1, []profile.Kind{profile.CPU}, 3
	o.Warmup = result.IterSpec{Count: 1, Time: 20 * time.Millisecond}
	o.Measure = result.IterSpec{Count: 2, Time: 100 * time.Millisecond}
	o.Timeout = time.Minute
	exe, _ := os.Executable()
	dir := t.TempDir()
	rn := &engine.Runner{Executable: exe, ProfileDir: dir}
	cases, err := o.Plan(forkRegistry)
	if err != nil || len(cases) != 1 {
		t.Fatalf("plan: %v, %d cases", err, len(cases))
	}
	sides := []engine.Side{{Name: "base", Launch: engine.Program{}}, {Name: "exp", Launch: engine.Program{}}}
	runs, err := rn.ProfileSides(context.Background(), o, cases, sides)
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	for s, run := range runs {
		cr := run.Cases[0]
		if len(cr.Iterations) != 0 || len(cr.Profiles) != 3 {
			t.Fatalf("side %d: %d iterations and %d profiles, want 0 and 3", s, len(cr.Iterations), len(cr.Profiles))
		}
		for i, pr := range cr.Profiles {
			if pr.Err != nil || pr.Round != i+1 || pr.Ops <= 0 || paths[pr.Path] || !strings.Contains(pr.Path, sides[s].Name) {
				t.Errorf("side %d, profile %d: %+v", s, i, pr)
			}
			paths[pr.Path] = true
			f, err := os.Open(pr.Path)
			if err != nil {
				t.Fatal(err)
			}
			p, err := pprofile.Parse(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			// 200 ms measured at runtime/pprof's 100 Hz: about 20 samples
			// on an idle host, fewer when other processes take the CPU
			// (6 were seen under the parallel test run). What holds under
			// any load: the window has samples and they are the kernel's.
			var samples, kernel int64
			for _, smp := range p.Sample {
				samples += smp.Value[0]
				if sampleIn(smp, "spinKernel") {
					kernel += smp.Value[0]
				}
			}
			if samples == 0 || 2*kernel < samples {
				t.Errorf("side %d, round %d: %d CPU samples, %d in spinKernel; want some, most in it", s, pr.Round, samples, kernel)
			}
		}
	}
}

// sampleIn says whether a sample's stack has a function whose name ends in fn.
func sampleIn(smp *pprofile.Sample, fn string) bool {
	for _, loc := range smp.Location {
		for _, ln := range loc.Line {
			if ln.Function != nil && strings.HasSuffix(ln.Function.Name, fn) {
				return true
			}
		}
	}
	return false
}

// TestPerfSamplingFallsBackOnAStrippedProgram: PerfSampling asks for a
// cpu profile sampled by perf, which names its samples from the program's
// symbol table; this test binary has none (go test strips it), so the
// fork is runtime/pprof's as without the option (its period, 10 ms, and
// samples of the kernel).
func TestPerfSamplingFallsBackOnAStrippedProgram(t *testing.T) {
	exe, _ := os.Executable()
	if profile.Sampleable(exe, profile.CountedLoop) {
		t.Skip("this test binary has a symbol table")
	}
	o := profiledOptions("^BenchmarkSpin$", profile.CPU)
	run := runProfiled(t, o)
	o.PerfSampling = true
	for _, r := range []*result.Run{run, runProfiled(t, o)} {
		pr := r.Cases[0].Profiles[0]
		p, err := profile.Read(pr.Path)
		if err != nil || pr.Err != nil {
			t.Fatal(err, pr.Err)
		}
		if _, ok := hasFrame(summaryOf(t, r, profile.CPU), "spinKernel"); p.Period != 10_000_000 || pr.Ops <= 0 || !ok {
			t.Errorf("period %d ns, %d ops, spinKernel sampled: %v; want runtime/pprof's 10 ms, ops, the kernel", p.Period, pr.Ops, ok)
		}
	}
}
