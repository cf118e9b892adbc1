package harness

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/profile"
)

const hdrV2 = hdrhistogram.V2CompressedEncodingCookieBase

// batchTargetNs is how long one calibrated batch of ops lasts: long enough
// that the per-batch check of the stop flag costs nothing, short enough
// that the window ends within microseconds of the signal.
const batchTargetNs = 20_000

var epoch = time.Now()

// nanotime reads the monotonic clock (one runtime nanotime call).
func nanotime() int64 { return int64(time.Since(epoch)) }

// workerResult is what one worker measured in one iteration.
type workerResult struct {
	ops      int64 // ops in the measured window (× OpsPerInvocation)
	ns       int64 // time of the measured window (or of the ops, when timed one by one)
	executed int64 // every op run in the iteration
	counters []float64
	hist     *histogram
	err      error
}

// iterSync coordinates the workers of one iteration (JMH's synchronized
// iterations): every worker starts and runs ops before the window opens,
// and keeps running until every worker has closed its window, so each
// measured window lies where all workers run.
type iterSync struct {
	n         int32
	started   atomic.Int32
	finished  atomic.Int32
	measuring atomic.Bool
	stop      atomic.Bool
	abort     atomic.Bool
	gate      atomic.Bool // counted iterations: every worker may start
	// stopAt is the nanotime at which a timed window ends: each worker
	// checks it after every batch as well as stop, so the window ends on
	// time even when the control goroutine, sharing one P with a busy
	// worker (GOMAXPROCS=1, a duet's side), wakes up late.
	stopAt atomic.Int64
}

// invocationFailure carries a hook error out of a worker loop.
type invocationFailure struct{ err error }

// iterRun is one iteration's worker goroutines, started and parked before
// the measured window so that the harness's own allocations (goroutines,
// result slots) fall outside the memory statistics.
//
// Nothing inside the window blocks on a channel, WaitGroup or mutex of the
// harness: a blocking goroutine may allocate a runtime wait record, which
// would show up in B/op. The goroutines spin (yielding) on atomics instead.
type iterRun struct {
	s       *iterSync
	results []workerResult
	begin   atomic.Bool
	exited  atomic.Int32
	counted bool
	spec    result.IterSpec
	// perf, when the fork runs under perf (stat or record) and the
	// iteration is measured, has its events enabled while the workers
	// measure and disabled after.
	perf *profile.PerfControl
}

func prepareWorkers(workers []*Worker, mode result.Mode, spec result.IterSpec) *iterRun {
	ir := &iterRun{
		s:       &iterSync{n: int32(len(workers))},
		results: make([]workerResult, len(workers)),
		counted: spec.Ops > 0 || mode == result.SingleShot,
		spec:    spec,
	}
	s := ir.s
	perWorker := max(spec.Ops, 1)
	for i, w := range workers {
		r := &ir.results[i]
		r.counters = make([]float64, len(w.counters))
		if len(w.c0) != len(w.counters) {
			w.c0 = make([]float64, len(w.counters))
		}
		if w.hist != nil {
			w.hist.h.Reset()
			r.hist = w.hist
		}
		go func() {
			defer ir.exited.Add(1)
			defer func() {
				if rec := recover(); rec != nil {
					if f, ok := rec.(invocationFailure); ok {
						r.err = &PhaseError{Phase: "invocation hook", Err: f.err}
					} else {
						r.err = &PhaseError{Phase: "op", Err: fmt.Errorf("panic: %v", rec), Stack: string(debug.Stack())}
					}
					s.abort.Store(true)
				}
			}()
			for !ir.begin.Load() {
				runtime.Gosched()
			}
			if ir.counted {
				w.runCounted(s, perWorker, r)
			} else {
				w.runTimed(s, r)
			}
		}()
	}
	return ir
}

// run releases the workers, drives the iteration's signals and waits for
// every worker to return.
func (ir *iterRun) run() ([]workerResult, error) {
	s := ir.s
	ir.begin.Store(true)
	await(func() bool { return s.started.Load() >= s.n || s.abort.Load() })
	if err := ir.perf.Enable(); err != nil {
		s.abort.Store(true)
		ir.begin.Store(true)
		await(func() bool { return ir.exited.Load() >= s.n })
		return nil, err
	}
	if ir.counted {
		s.gate.Store(true)
	} else {
		s.stopAt.Store(nanotime() + int64(ir.spec.Time))
		s.measuring.Store(true)
		deadline := time.Now().Add(ir.spec.Time)
		for !s.abort.Load() {
			left := time.Until(deadline)
			if left <= 0 {
				break
			}
			time.Sleep(min(left, 10*time.Millisecond))
		}
		s.stop.Store(true)
	}
	await(func() bool { return ir.exited.Load() >= s.n })
	if err := ir.perf.Disable(); err != nil {
		return nil, err
	}
	for i := range ir.results {
		if ir.results[i].err != nil {
			return nil, fmt.Errorf("worker %d: %w", i, ir.results[i].err)
		}
	}
	return ir.results, nil
}

// await polls cond: yielding for the first millisecond (no timer, so no
// runtime timer-heap growth inside a short window), then sleeping 50 µs
// between polls so a long wait does not burn a core beside the workers.
func await(cond func() bool) {
	start := nanotime()
	for !cond() {
		if nanotime()-start < int64(time.Millisecond) {
			runtime.Gosched()
		} else {
			time.Sleep(50 * time.Microsecond)
		}
	}
}

// runTimed is the time-boxed loop: calibrate, ramp up, measure between the
// measuring and stop signals, ramp down until every worker has finished.
// Like JMH's generated loop, a window holds at least one batch, so a worker
// whose ramp-up batch outlasts the window still measures something (its
// window then ends after the stop signal, while the others ramp down).
func (w *Worker) runTimed(s *iterSync, r *workerResult) {
	if !w.calibrated && !w.sharp && w.hist == nil {
		w.calibrate(r)
	}
	// Every worker runs at least one op before it reports as started, so
	// no window opens before every worker is running.
	w.runBatch(r)
	s.started.Add(1)
	for !s.measuring.Load() {
		if s.abort.Load() {
			return
		}
		w.runBatch(r)
	}
	c0 := w.counterValues()
	w.enterWindow()
	var ops, ns int64
	stopAt := s.stopAt.Load()
	switch {
	case w.sharp:
		for {
			ns += w.invokeTimed(true)
			ops++
			if s.stop.Load() || nanotime() >= stopAt {
				break
			}
		}
	case w.hist != nil:
		body, h := w.body, w.hist
		t0 := nanotime()
		prev := t0
		for {
			body()
			now := nanotime()
			h.record(now - prev)
			prev = now
			ops++
			if s.stop.Load() || now >= stopAt {
				break
			}
		}
		ns = prev - t0
	default:
		body, quads := w.body, w.batch/4
		t0 := nanotime()
		for {
			for i := quads; i > 0; i-- {
				body()
				body()
				body()
				body()
			}
			ops += quads * 4
			if s.stop.Load() || nanotime() >= stopAt {
				break
			}
		}
		ns = nanotime() - t0
	}
	ns = w.planted(ns)
	w.leaveWindow()
	w.counterDeltas(c0, r.counters)
	r.ops, r.ns = ops*w.opi, ns
	r.executed += ops * w.opi
	s.finished.Add(1)
	for s.finished.Load() < s.n && !s.abort.Load() {
		w.runBatch(r)
	}
}

// runCounted runs exactly n invocations after all workers are ready.
func (w *Worker) runCounted(s *iterSync, n int64, r *workerResult) {
	s.started.Add(1)
	for !s.gate.Load() {
		if s.abort.Load() {
			return
		}
		runtime.Gosched()
	}
	c0 := w.counterValues()
	w.enterWindow()
	var ns int64
	switch {
	case w.sharp || w.hist != nil:
		for range n {
			ns += w.invokeTimed(true)
		}
	default:
		t0 := nanotime()
		runOps(w.body, n)
		ns = nanotime() - t0
	}
	ns = w.planted(ns)
	w.leaveWindow()
	w.counterDeltas(c0, r.counters)
	r.ops, r.ns = n*w.opi, ns
	r.executed += n * w.opi
}

// runOps runs body n times. It is the measured loop of counted
// iterations, kept out of line so that callgrind can collect inside it
// alone (profile.MeasuredLoop names it).
//
//go:noinline
func runOps(body func(), n int64) {
	for i := n; i > 0; i-- {
		body()
	}
}

// planted is the window's time ns with the planted slowdown of
// Plan.Plant: it spins on the clock, still inside the window, for
// plant × ns, and returns the time measured from the window's ops to the
// spin's end.
func (w *Worker) planted(ns int64) int64 {
	if w.plant == 0 {
		return ns
	}
	t0 := nanotime()
	want := int64(float64(ns) * w.plant)
	for nanotime()-t0 < want {
	}
	return ns + nanotime() - t0
}

func (w *Worker) enterWindow() {
	w.inWindow = true
	if w.label {
		pprof.SetGoroutineLabels(profile.WindowContext)
	}
}

func (w *Worker) leaveWindow() {
	w.inWindow = false
	if w.label {
		pprof.SetGoroutineLabels(context.Background())
	}
}

// calibrate doubles the batch until one batch lasts batchTargetNs. The
// batch stays a power of two of at least 4: the measured loop is unrolled
// by four.
func (w *Worker) calibrate(r *workerResult) {
	for w.batch < 1<<24 {
		t0 := nanotime()
		for i := w.batch; i > 0; i-- {
			w.body()
		}
		r.executed += w.batch * w.opi
		if nanotime()-t0 >= batchTargetNs && w.batch >= 4 {
			break
		}
		w.batch *= 2
	}
	w.calibrated = true
}

// runBatch runs one unmeasured batch (ramp-up and ramp-down).
func (w *Worker) runBatch(r *workerResult) {
	if w.sharp {
		w.invokeTimed(false)
		r.executed += w.opi
		return
	}
	body := w.body
	for i := w.batch; i > 0; i-- {
		body()
	}
	r.executed += w.batch * w.opi
}

// invokeTimed runs one invocation with its invocation-level hooks (outside
// the timed span) and returns the op's time, recording it in the latency
// histogram when record is set and the mode samples.
func (w *Worker) invokeTimed(record bool) int64 {
	t, g := w.trial, w.group
	runShared(&t.invMu, t.invSetup, false)
	runShared(&g.invMu, g.invSetup, false)
	failIf(runAll(w.invSetup, false))
	t0 := nanotime()
	w.body()
	ns := nanotime() - t0
	if record && w.hist != nil {
		w.hist.record(ns)
	}
	failIf(runAll(w.invTeardown, true))
	runShared(&g.invMu, g.invTeardown, true)
	runShared(&t.invMu, t.invTeardown, true)
	return ns
}

// runShared runs invocation hooks that workers share (a benchmark's or a
// group's) under their lock, in order or in reverse, and fails the
// invocation on an error. It inlines: an invocation without such hooks
// pays a length check, not a call.
func runShared(mu *sync.Mutex, hooks []func() error, reverse bool) {
	if len(hooks) > 0 {
		runLocked(mu, hooks, reverse)
	}
}

func runLocked(mu *sync.Mutex, hooks []func() error, reverse bool) {
	mu.Lock()
	err := runAll(hooks, reverse)
	mu.Unlock()
	failIf(err)
}

func failIf(err error) {
	if err != nil {
		panic(invocationFailure{err})
	}
}

// counterValues snapshots the counters into the worker's own buffer (no
// allocation inside the measured window).
func (w *Worker) counterValues() []float64 {
	for i, c := range w.counters {
		w.c0[i] = c.value()
	}
	return w.c0
}

func (w *Worker) counterDeltas(c0, dst []float64) {
	for i, c := range w.counters {
		dst[i] = c.value() - c0[i]
	}
}

// timerCost measures the cost of one clock read as the median gap between
// back-to-back reads.
func timerCost() float64 {
	const n = 1001
	gaps := make([]int64, n)
	prev := nanotime()
	for i := range gaps {
		now := nanotime()
		gaps[i] = now - prev
		prev = now
	}
	slices.Sort(gaps)
	return float64(gaps[n/2])
}
