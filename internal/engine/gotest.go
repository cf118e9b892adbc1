package engine

import (
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/gotest"
	"github.com/ledgerbench/ledgerbench/internal/profile"
)

// GoTest is a testing.B benchmark of a package's test binary.
type GoTest struct {
	Pkg  string // the package's import path: the pkg key of its results
	Name string // the full benchmark name, without go test's -N suffix
	// Procs is its -test.cpu: the GOMAXPROCS of the benchmark (and the -N
	// suffix of its result names when above 1).
	Procs int
}

// TestBinary is one package's test binary and the directory it runs in
// (the package's own, as go test runs it).
type TestBinary struct {
	Path string
	Dir  string
}

// testFork runs one fork of a go test benchmark: its test binary, in the
// package's directory, running that benchmark alone Warmup.Count +
// Measure.Count times (-test.count) at the measurement's benchtime, or at
// the b.N an earlier fork found for it (forkBenchtime). The first
// Warmup.Count result lines are the warmup. What a fork printed
// that cannot be read is named in the case's notes and stays in its log.
func (rn *Runner) testFork(ctx context.Context, bins TestBinaries, o Options, c Case, forkNo int, cr *result.CaseResult) *result.ForkError {
	cr.Procs = c.Test.Procs
	bin, ok := bins[c.Test.Pkg]
	if !ok {
		return &result.ForkError{Message: "no test binary of package " + c.Test.Pkg}
	}
	args := gotest.RunArgs(c.Test.Name, o.Warmup.Count+o.Measure.Count, forkBenchtime(o, cr), c.Test.Procs)
	log := rn.logFile(cr.Case, fmt.Sprintf("fork%d", forkNo))
	r := rn.runTest(ctx, bin, args, nil, nil, o, c, log)
	if want := o.Warmup.Count + o.Measure.Count; len(r.Results) > want && r.Err == nil {
		// Lines that read as this benchmark's results beyond those asked
		// for: the benchmark prints look-alikes, and which are go test's
		// cannot be told. None is counted.
		r.Err = &result.ForkError{Message: fmt.Sprintf("the test binary printed %d result lines of %s for the %d asked for (-test.count): the benchmark prints lines that read as its results, so none is counted",
			len(r.Results), c.Test.Name, want), Log: logName(log)}
		r.Results = nil
	}
	for i, res := range r.Results {
		cr.Iterations = append(cr.Iterations, res.Iteration(forkNo, i, o.Warmup.Count))
	}
	if r.FirstLine > 0 {
		cr.Startup = append(cr.Startup, r.FirstLine)
	}
	if r.Started > 0 {
		cr.Ready = append(cr.Ready, r.Started)
	}
	if r.CPUs != nil {
		cr.ForkCPUs = append(cr.ForkCPUs, r.CPUs)
	}
	for _, w := range r.Warnings {
		cr.Notes = append(cr.Notes, fmt.Sprintf("fork %d: %s", forkNo, w))
	}
	if r.Err == nil && len(r.Results) < o.Warmup.Count+o.Measure.Count {
		r.Err = &result.ForkError{Message: fmt.Sprintf("the test binary reported %d of the %d results asked for (-test.count)%s",
			len(r.Results), o.Warmup.Count+o.Measure.Count, r.Why())}
		r.Err.Log = logName(log)
	}
	return r.Err
}

// forkBenchtime is a go test fork's -test.benchtime: the measurement's,
// or, once an earlier fork of the case on this side measured at the
// measurement's time, the median b.N of its measured counts ("Nx"). go
// test finds b.N for a time anew in every count by running the benchmark
// at growing b.N (1, 100, 10⁴, …), and the benchmark pays its setup in
// each of those runs (a StopTimer rebuild, a fixture before ResetTimer);
// at a fixed b.N it runs b.N = 1 and then b.N. Each side learns its own
// b.N, so both measure about the measurement's time.
func forkBenchtime(o Options, cr *result.CaseResult) string {
	if o.Measure.Ops > 0 {
		return gotest.Benchtime(o.Measure)
	}
	var ns []int64
	for _, it := range cr.Iterations {
		if it.GoTest && !it.Warmup && it.Executed > 0 {
			ns = append(ns, it.Executed)
		}
	}
	if len(ns) == 0 {
		return gotest.Benchtime(o.Measure)
	}
	slices.Sort(ns)
	return fmt.Sprintf("%dx", ns[len(ns)/2])
}

// runTest runs a test binary for case c until it exits (see gotest.Run):
// a process that prints no result line for Timeout beyond the
// measurement's benchtime is killed as hung. wrap, when set, is the
// program that runs the binary (callgrind) with its own arguments before
// it, and env its environment; log, when set, receives the output and is
// closed.
func (rn *Runner) runTest(ctx context.Context, bin TestBinary, args []string, wrap []string, env []string, o Options, c Case, log *cappedLog) gotest.Outcome {
	wait := o.Timeout
	if o.Measure.Ops == 0 {
		wait += 2 * o.Measure.Time // go test runs a little past its benchtime
	}
	p := gotest.Process{Binary: bin.Path, Dir: bin.Dir, Args: args, Wrap: wrap, Env: env, CPUs: rn.CPUs,
		Bench: c.Test.Name, Procs: c.Test.Procs, Wait: wait}
	if log != nil {
		defer log.Close()
		p.Log, p.LogName = log, log.Name()
	}
	return gotest.Run(ctx, p)
}

func logName(log *cappedLog) string {
	if log == nil {
		return ""
	}
	return log.Name()
}

// testProfileFlag is the test binary's own flag of each profiler that
// runs inside it.
var testProfileFlag = map[profile.Kind]string{
	profile.CPU: "-test.cpuprofile", profile.Block: "-test.blockprofile",
	profile.Mutex: "-test.mutexprofile", profile.Allocs: "-test.memprofile",
}

// testProfileFork runs the profiling fork of kind k for a go test
// benchmark: one run of it at the measurement's benchtime with the test
// binary's own profile flag. Instructions are counted under callgrind in
// two runs of the whole test binary, at b.N = K and 2K: their difference
// divided by K is the cost of one op, what the benchmark function does
// per b.N (the runtime's allocation and write-barrier work included; GC is
// off but for testing's own runtime.GC before each run). What does not
// grow with b.N (the process's start, the benchmark's setup, the testing
// package's work per run) cancels out. Collection is not toggled around a
// function: Go switches goroutine stacks under callgrind, which loses
// track of a toggled function's exit. The count repeats to about 1 %, not
// exactly: the scheduler's work inside the process depends on the wall
// clock, and K is made large to spread it.
func (rn *Runner) testProfileFork(ctx context.Context, o Options, k profile.Kind, c Case, cr *result.CaseResult, side string, bins TestBinaries) (result.ProfileRun, string) {
	pr := result.ProfileRun{Kind: string(k)}
	bin, ok := bins[c.Test.Pkg]
	if !ok {
		pr.Err = fmt.Errorf("no test binary of package %s", c.Test.Pkg)
		return pr, ""
	}
	if k == profile.Instructions {
		return rn.testInstructions(ctx, o, c, cr, side, bin)
	}
	flag, ok := testProfileFlag[k]
	if !ok {
		return pr, fmt.Sprintf("%s: not available for go test benchmarks (it needs benchctl's own worker process); cpu, block, mutex, allocs and instructions are", k)
	}
	dir, err := rn.profileDir(side, cr)
	if err != nil {
		pr.Err = err
		return pr, ""
	}
	pr.Path = filepath.Join(dir, string(k)+".pb.gz")
	// A fixed b.N, so the profile's ops are known exactly: run1's one op
	// and then n. n covers one measurement iteration at the measured
	// speed (a sampled one's shorter window, when perf samples the CPU).
	var wrap []string
	var data string // perf's samples, when perf samples the CPU
	if k == profile.CPU && o.PerfSampling && profile.Sampleable(bin.Path, profile.TestLoop...) {
		if wrap, data, err = profile.SampleWrap(dir); err != nil {
			pr.Err = err
			return pr, ""
		}
		o = o.sampled()
	}
	n := profileN(o, cr)
	args := gotest.RunArgs(c.Test.Name, 1, fmt.Sprintf("%dx", n), c.Test.Procs)
	if wrap == nil {
		args = append(args, flag+"="+pr.Path)
	}
	if k == profile.Allocs {
		// Every allocation, not one sample per 512 KiB: the profile's
		// bytes and counts per op are then exact, as in-process profiles.
		args = append(args, "-test.memprofilerate=1")
	}
	r := rn.runTest(ctx, bin, args, wrap, nil, o, c, rn.logFile(cr.Case, string(k)))
	if r.Err == nil && len(r.Results) == 0 {
		r.Err = &result.ForkError{Message: "the test binary reported no result" + r.Why()}
	}
	if r.Err != nil {
		r.Err.Benchmark, r.Err.Fork = cr.Case.Name(), 1
		pr.Err = r.Err
		return pr, ""
	}
	pr.Ops = int64(r.Results[0].N)
	if pr.Ops > 1 {
		pr.Ops++ // run1's op; go test runs none else at a fixed b.N
	}
	if wrap != nil {
		pr.Err = writeSamples(data, bin.Path, pr.Path, profile.TestLoop...)
	}
	return pr, ""
}

// MeanNs is the mean ns/op of the case's measured iterations (0: none).
func MeanNs(cr *result.CaseResult) float64 {
	var ns float64
	var n int
	for _, it := range cr.Iterations {
		if !it.Warmup && it.Total.NsPerOp > 0 {
			ns += it.Total.NsPerOp
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return ns / float64(n)
}

// profileN is the b.N of a profiling fork: the measurement's op count, or
// as many ops as one measurement iteration's time holds at the measured
// speed: this run's, else o.NsPerOp's (1 when neither has one).
func profileN(o Options, cr *result.CaseResult) int64 {
	if o.Measure.Ops > 0 {
		return o.Measure.Ops
	}
	ns := MeanNs(cr)
	if ns <= 0 {
		ns = o.NsPerOp[cr.Case.Name()]
	}
	if ns <= 0 {
		return 1
	}
	return max(1, int64(float64(o.Measure.Time)/ns))
}

// profileDir is the case's profile directory (of its profiling round,
// when there are several), absolute: a test binary
// runs in its package's directory, so a path relative to this process's
// would put its profile elsewhere.
func (rn *Runner) profileDir(side string, cr *result.CaseResult) (string, error) {
	parts := append([]string{rn.ProfileDir, side}, rn.fileName(cr.Case)...)
	if rn.round > 0 {
		parts = append(parts, fmt.Sprintf("round-%d", rn.round))
	}
	dir, err := filepath.Abs(filepath.Join(parts...))
	if err != nil {
		return "", err
	}
	return dir, os.MkdirAll(dir, 0o755)
}

// instructionsK is the smaller b.N of the two callgrind runs: about 50 ms
// of the measured time per op (a few seconds under callgrind), between
// 1000 and 1e6 ops (20000 when nothing was measured).
func instructionsK(cr *result.CaseResult) int64 {
	ns := MeanNs(cr)
	if ns <= 0 {
		return 20_000
	}
	return min(max(int64(50e6/ns), 1000), 1_000_000)
}

func (rn *Runner) testInstructions(ctx context.Context, o Options, c Case, cr *result.CaseResult, side string, bin TestBinary) (result.ProfileRun, string) {
	pr := result.ProfileRun{Kind: string(profile.Instructions)}
	dir, err := rn.profileDir(side, cr)
	if err != nil {
		pr.Err = err
		return pr, ""
	}
	k := instructionsK(cr)
	var totals [2]int64
	for i, n := range []int64{k, 2 * k} {
		out := filepath.Join(dir, fmt.Sprintf("callgrind.%dx.out", n))
		vg, wrap, err := profile.CallgrindIn(bin.Path, out, nil)
		if err != nil {
			return pr, "instructions: " + err.Error()
		}
		// -test.cpu=1 is callgrind's GOMAXPROCS=1 (the flag wins over the
		// environment); the whole benchmark runs at exactly b.N = n.
		args := gotest.RunArgs(c.Test.Name, 1, fmt.Sprintf("%dx", n), 1)
		tc := c
		tc.Test = &GoTest{Pkg: c.Test.Pkg, Name: c.Test.Name, Procs: 1}
		r := rn.runTest(ctx, bin, args, append([]string{vg}, wrap[:len(wrap)-1]...), profile.CallgrindEnv(nil), o, tc, rn.logFile(cr.Case, fmt.Sprintf("instructions.%dx", n)))
		if r.Err != nil {
			r.Err.Benchmark, r.Err.Fork = cr.Case.Name(), 1
			valgrindFault(profile.Instructions, r.Err)
			pr.Err = r.Err
			return pr, ""
		}
		if totals[i], err = profile.ParseCallgrind(out); err != nil {
			pr.Err = err
			return pr, ""
		}
		pr.Path = out
		pr.Callgrind = append(pr.Callgrind, result.CallgrindFile{Path: out, Ops: n})
	}
	pr.Ops, pr.Exe = k, bin.Path
	switch d := totals[1] - totals[0]; {
	case totals[0] == 0:
		pr.Err = errors.New("callgrind counted no instructions")
	case d <= 0:
		pr.Err = fmt.Errorf("callgrind counted %d instructions at b.N=%d and %d at b.N=%d: no cost per op to read", totals[0], k, totals[1], 2*k)
	default:
		pr.InstructionsPerOp = float64(d) / float64(k)
	}
	return pr, ""
}

// binaryGoVersion is the Go version that built the binary at path, from
// its build information; "" when it has none (or cannot be read).
func binaryGoVersion(path string) string {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return ""
	}
	return bi.GoVersion
}
