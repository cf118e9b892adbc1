package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/fork"
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
// Measure.Count times (-test.count) at the measurement's benchtime. The
// first Warmup.Count result lines are the warmup. What a fork printed
// that cannot be read is named in the case's notes and stays in its log.
func (rn *Runner) testFork(ctx context.Context, bins TestBinaries, o Options, c Case, forkNo int, cr *result.CaseResult) *result.ForkError {
	cr.Procs = c.Test.Procs
	bin, ok := bins[c.Test.Pkg]
	if !ok {
		return &result.ForkError{Message: "no test binary of package " + c.Test.Pkg}
	}
	args := gotest.RunArgs(c.Test.Name, o.Warmup.Count+o.Measure.Count, gotest.Benchtime(o.Measure), c.Test.Procs)
	log := rn.logFile(cr.Case, fmt.Sprintf("fork%d", forkNo))
	r := rn.runTest(ctx, bin, args, nil, nil, o, c, log)
	if want := o.Warmup.Count + o.Measure.Count; len(r.results) > want && r.fe == nil {
		// Lines that read as this benchmark's results beyond those asked
		// for: the benchmark prints look-alikes, and which are go test's
		// cannot be told. None is counted.
		r.fe = &result.ForkError{Message: fmt.Sprintf("the test binary printed %d result lines of %s for the %d asked for (-test.count): the benchmark prints lines that read as its results, so none is counted",
			len(r.results), c.Test.Name, want), Log: logName(log)}
		r.results = nil
	}
	for i, res := range r.results {
		cr.Iterations = append(cr.Iterations, testIteration(res, forkNo, i, o.Warmup.Count))
	}
	if r.firstLine > 0 {
		cr.Startup = append(cr.Startup, r.firstLine)
	}
	if r.started > 0 {
		cr.Ready = append(cr.Ready, r.started)
	}
	if r.cpus != nil {
		cr.ForkCPUs = append(cr.ForkCPUs, r.cpus)
	}
	for _, w := range r.warnings {
		cr.Notes = append(cr.Notes, fmt.Sprintf("fork %d: %s", forkNo, w))
	}
	if r.fe == nil && len(r.results) < o.Warmup.Count+o.Measure.Count {
		r.fe = &result.ForkError{Message: fmt.Sprintf("the test binary reported %d of the %d results asked for (-test.count)%s",
			len(r.results), o.Warmup.Count+o.Measure.Count, r.why())}
		r.fe.Log = logName(log)
	}
	return r.fe
}

// testIteration is the Iteration of one result line: the i-th of its fork.
func testIteration(res *gotest.Result, forkNo, i, warm int) result.Iteration {
	n := int64(res.N)
	ns := res.Values["ns/op"]
	it := result.Iteration{Fork: forkNo, Index: i, Warmup: i < warm, GoTest: true, Counted: true,
		Executed: n, WallNs: int64(ns * float64(n)),
		AllocBytes: uint64(math.Round(res.Values["B/op"] * float64(n))),
		Allocs:     uint64(math.Round(res.Values["allocs/op"] * float64(n))),
		Total:      result.OpStats{Workers: 1, Ops: n, NsPerOp: ns}}
	if !it.Warmup {
		it.Index = i - warm
	}
	if ns > 0 {
		it.Total.OpsPerSec = 1e9 / ns
	}
	for _, u := range res.Units {
		switch u {
		case "ns/op", "B/op", "allocs/op":
		default:
			if it.Total.Metrics == nil {
				it.Total.Metrics = map[string]float64{}
			}
			it.Total.Metrics[u] = res.Values[u]
		}
	}
	return it
}

// testRun is what one process of a test binary reported.
type testRun struct {
	results  []*gotest.Result
	warnings []string
	failed   []string // the --- FAIL: block of its output
	skipped  string
	// firstLine is exec to its first line of output (the start of its
	// first benchmark), started exec to the start of the benchmark run.
	firstLine, started time.Duration
	cpus               []int
	fe                 *result.ForkError
}

func (r *testRun) why() string {
	switch {
	case r.skipped != "":
		return ": it skipped: " + r.skipped
	case len(r.failed) > 0:
		return ":\n  " + strings.Join(r.failed, "\n  ")
	}
	return ""
}

// runTest runs a test binary until it exits, reading its output line by
// line: a process that prints no result for Timeout beyond the
// benchtime is killed as hung. wrap, when set, is the program that runs
// the binary (callgrind) with its own arguments before it and env.
func (rn *Runner) runTest(ctx context.Context, bin TestBinary, args []string, wrap []string, env []string, o Options, c Case, log *cappedLog) (r testRun) {
	if log != nil {
		defer log.Close()
	}
	path := bin.Path
	if len(wrap) > 0 {
		path, args = wrap[0], append(append(wrap[1:len(wrap):len(wrap)], bin.Path), args...)
	}
	q := &lineQueue{signal: make(chan struct{}, 1)}
	spec := fork.Spec{Path: path, Args: args, Env: env, Dir: bin.Dir, NoLink: true, Stdout: q, CPUs: rn.CPUs}
	if log != nil {
		spec.Log = log
	}
	proc, err := fork.Start(ctx, spec)
	if err != nil {
		r.fe = &result.ForkError{Message: err.Error()}
		return r
	}
	r.cpus = rn.CPUs
	wait := o.Timeout
	if o.Measure.Ops == 0 {
		wait += 2 * o.Measure.Time // go test runs a little past its benchtime
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	out := &testOutput{r: &r, c: c, log: log, started: proc.Started(), result: func() { timer.Reset(wait) }}
	var hung, interrupted bool
loop:
	for {
		select {
		case <-q.signal:
			out.lines(q.take())
		case <-proc.Exited():
			break loop
		case <-timer.C:
			hung = true
			proc.Kill()
			break loop
		case <-ctx.Done():
			interrupted = true
			proc.Kill()
			break loop
		}
	}
	werr := proc.Wait(5 * time.Second)
	q.close()
	out.lines(q.take())
	out.done()
	fail := func(msg string) {
		r.fe = &result.ForkError{Message: msg, Tail: proc.StderrTail(), Fatal: proc.Fatal(), Log: logName(log)}
		if werr != nil {
			r.fe.Exit = exitStatus(werr)
		}
		if r.fe.Fatal != "" && containsLine(r.fe.Tail, r.fe.Fatal) {
			r.fe.Fatal = ""
		}
	}
	switch {
	case interrupted:
		fail("interrupted (the run was stopped while this fork ran); killed")
	case hung:
		fail(fmt.Sprintf("hung: no result for %s; killed", wait))
	case werr != nil:
		fail("the test binary failed" + r.why())
	case !out.passed:
		// It exited 0 without go test's PASS: not go test's end (os.Exit
		// from the benchmark, say).
		fail("the test binary exited without go test's final PASS line" + r.why())
	}
	out.vouch()
	return r
}

// testOutput reads a test binary's output lines into its testRun: the
// benchmark's result lines, its --- FAIL: block and skip, go test's PASS,
// and a warning for each line that cannot be counted.
type testOutput struct {
	r                        *testRun
	c                        Case
	log                      *cappedLog
	started                  time.Time // the process's start
	result                   func()    // called for each result line counted
	lineNo, unread, failures int
	inFail, passed           bool
}

// lines reads the next lines.
func (t *testOutput) lines(ls []timedLine) {
	r := t.r
	for _, tl := range ls {
		t.lineNo++
		line := tl.text
		if t.lineNo == 1 {
			r.firstLine = tl.at.Sub(t.started)
		}
		if line == t.c.Test.Name && r.started == 0 {
			r.started = tl.at.Sub(t.started)
		}
		if t.inFail && (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")) {
			if t.failures == 1 {
				r.failed = append(r.failed, strings.TrimSpace(line))
			}
			continue
		}
		t.inFail = false
		switch {
		case line == "PASS":
			// go test's own last word for a binary whose tests and
			// benchmarks all passed.
			t.passed = true
			continue
		case strings.HasPrefix(line, "--- FAIL: "):
			// The first failure in full; the runs after it fail alike.
			t.inFail = true
			if t.failures++; t.failures == 1 {
				r.failed = append(r.failed, line)
			}
			continue
		case strings.HasPrefix(line, "--- SKIP: "):
			r.skipped = strings.TrimPrefix(line, "--- SKIP: ")
			continue
		}
		t.count(line)
	}
}

// count counts line when it is a result of the benchmark, and warns
// about it when it cannot be counted.
func (t *testOutput) count(line string) {
	res, err := gotest.ParseLine(line, t.c.Test.Procs)
	switch {
	case err != nil:
		t.warn(fmt.Sprintf("output line %d cannot be read as a result (%v), not counted: %q%s", t.lineNo, err, clip(line), logNote(t.log)))
	case res == nil:
	case res.Name != t.c.Test.Name:
		t.warn(fmt.Sprintf("output line %d is a result of %s, not of this benchmark, not counted: %q%s", t.lineNo, res.Name, clip(line), logNote(t.log)))
	default:
		t.r.results = append(t.r.results, res)
		t.result()
	}
}

func (t *testOutput) warn(w string) {
	if t.unread++; t.unread <= maxWarnings {
		t.r.warnings = append(t.r.warnings, w)
	}
}

// done adds, after the last line, how many warnings were not kept.
func (t *testOutput) done() {
	if t.unread > maxWarnings {
		t.r.warnings = append(t.r.warnings, fmt.Sprintf("and %d more output lines not counted%s", t.unread-maxWarnings, logNote(t.log)))
	}
}

// vouch drops the result lines of a binary that did not reach go test's
// PASS (text anyone in the process can print: only PASS vouches for
// them), and says how often a failing benchmark failed.
func (t *testOutput) vouch() {
	r := t.r
	if !t.passed && len(r.results) > 0 {
		r.results = nil
		r.fe.Message += "\n  (its result lines are not counted: only a test binary that ends with PASS vouches for them)"
	}
	if r.fe != nil && t.failures > 1 {
		r.fe.Message += fmt.Sprintf("\n  (it failed %d times in this fork)", t.failures)
	}
}

func containsLine(ls []string, l string) bool {
	for _, x := range ls {
		if x == l {
			return true
		}
	}
	return false
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

func logName(log *cappedLog) string {
	if log == nil {
		return ""
	}
	return log.Name()
}

func logNote(log *cappedLog) string {
	if log == nil {
		return ""
	}
	return " (kept in " + log.Name() + ")"
}

// maxWarnings is how many unreadable lines of one fork are named.
const maxWarnings = 3

// maxLine bounds one line of a test binary's output; the rest of a longer
// line is dropped from parsing (the log keeps it).
const maxLine = 64 << 10

// timedLine is one line of output and when it arrived.
type timedLine struct {
	text string
	at   time.Time
}

// lineQueue splits a process's stdout into lines without ever blocking
// its writer; the reader takes them after each signal.
type lineQueue struct {
	mu      sync.Mutex
	partial []byte
	lines   []timedLine
	signal  chan struct{}
}

func (q *lineQueue) Write(b []byte) (int, error) {
	q.mu.Lock()
	now := time.Now()
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			q.add(b)
			break
		}
		q.add(b[:i])
		q.lines = append(q.lines, timedLine{strings.TrimRight(string(q.partial), "\r"), now})
		q.partial = q.partial[:0]
		b = b[i+1:]
	}
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
	return n, nil
}

func (q *lineQueue) add(b []byte) {
	if room := maxLine - len(q.partial); room > 0 {
		q.partial = append(q.partial, b[:min(len(b), room)]...)
	}
}

// close ends the last line, if it had no newline.
func (q *lineQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.partial) > 0 {
		q.lines = append(q.lines, timedLine{string(q.partial), time.Now()})
		q.partial = nil
	}
}

func (q *lineQueue) take() []timedLine {
	q.mu.Lock()
	defer q.mu.Unlock()
	ls := q.lines
	q.lines = nil
	return ls
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
	// speed.
	n := profileN(o, cr)
	args := append(gotest.RunArgs(c.Test.Name, 1, fmt.Sprintf("%dx", n), c.Test.Procs), flag+"="+pr.Path)
	if k == profile.Allocs {
		// Every allocation, not one sample per 512 KiB: the profile's
		// bytes and counts per op are then exact, as in-process profiles.
		args = append(args, "-test.memprofilerate=1")
	}
	r := rn.runTest(ctx, bin, args, nil, nil, o, c, rn.logFile(cr.Case, string(k)))
	if r.fe == nil && len(r.results) == 0 {
		r.fe = &result.ForkError{Message: "the test binary reported no result" + r.why()}
	}
	if r.fe != nil {
		r.fe.Benchmark, r.fe.Fork = cr.Case.Name(), 1
		pr.Err = r.fe
		return pr, ""
	}
	pr.Ops = int64(r.results[0].N)
	if pr.Ops > 1 {
		pr.Ops++ // run1's op; go test runs none else at a fixed b.N
	}
	return pr, ""
}

// meanNs is the mean ns/op of the case's measured iterations (0: none).
func meanNs(cr *result.CaseResult) float64 {
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
// speed (1 when nothing was measured).
func profileN(o Options, cr *result.CaseResult) int64 {
	if o.Measure.Ops > 0 {
		return o.Measure.Ops
	}
	ns := meanNs(cr)
	if ns <= 0 {
		return 1
	}
	return max(1, int64(float64(o.Measure.Time)/ns))
}

// profileDir is the case's profile directory, absolute: a test binary
// runs in its package's directory, so a path relative to this process's
// would put its profile elsewhere.
func (rn *Runner) profileDir(side string, cr *result.CaseResult) (string, error) {
	dir, err := filepath.Abs(filepath.Join(append([]string{rn.ProfileDir, side}, rn.fileName(cr.Case)...)...))
	if err != nil {
		return "", err
	}
	return dir, os.MkdirAll(dir, 0o755)
}

// instructionsK is the smaller b.N of the two callgrind runs: about 50 ms
// of the measured time per op (a few seconds under callgrind), between
// 1000 and 1e6 ops (20000 when nothing was measured).
func instructionsK(cr *result.CaseResult) int64 {
	ns := meanNs(cr)
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
		if r.fe != nil {
			r.fe.Benchmark, r.fe.Fork = cr.Case.Name(), 1
			valgrindFault(profile.Instructions, r.fe)
			pr.Err = r.fe
			return pr, ""
		}
		if totals[i], err = profile.ParseCallgrind(out); err != nil {
			pr.Err = err
			return pr, ""
		}
		pr.Path = out
	}
	pr.Ops = k
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
