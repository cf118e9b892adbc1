package harness

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/ledgerbench/ledgerbench/harness/hostcheck"
	"github.com/ledgerbench/ledgerbench/harness/result"
	"github.com/ledgerbench/ledgerbench/internal/profile"
)

// safely runs f on a goroutine of its own, turning a panic into a
// *trial.PhaseError with its stack, and a runtime.Goexit (t.FailNow from a
// testing helper, say), which no recover sees, into an error naming it
// instead of a silent end of the process.
func safely(phase string, f func() error) (err error) {
	done := make(chan struct{})
	go func() {
		returned := false
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				err = &PhaseError{Phase: phase, Err: fmt.Errorf("panic: %v", r), Stack: string(debug.Stack())}
			} else if !returned {
				err = &PhaseError{Phase: phase, Err: errors.New("runtime.Goexit was called (t.FailNow or t.Fatal of a testing helper?): the phase never returned")}
			}
		}()
		e := f()
		returned = true
		if e != nil {
			var pe *PhaseError
			if !errors.As(e, &pe) {
				e = &PhaseError{Phase: phase, Err: e}
			}
		}
		err = e
	}()
	<-done
	return err
}

type trialRun struct {
	t       *Trial
	plan    *Plan
	groups  []*Group
	workers []*Worker
	timerNs float64
	perf    *profile.PerfControl // set when the fork runs under perf (stat or record)
	host    *hostcheck.Host      // telemetry: temperature and steal
}

// Run runs one trial of plan p of benchmark b in this process, which the
// planner has completed (mode, tolerance, valid iterations), calls emit
// after every iteration, and returns the workers' folded sink words, so
// the results the ops consumed are observably used. The trial's
// teardowns run even when an iteration fails.
func Run(b *Benchmark, p *Plan, emit func(*result.Iteration) error) (sink uint64, err error) {
	if err := checkPlan(b, p); err != nil {
		return 0, err
	}
	if p.Profile != "" {
		profile.Prepare(profile.Kind(p.Profile))
	}
	tr := &trialRun{plan: p, t: &Trial{bench: b, params: p.Params, seed: p.Seed}, host: hostcheck.Local("", nil)}
	if tr.perf, err = profile.OpenPerfControl(); err != nil {
		return 0, err
	}
	if err := safely("setup", func() error { return b.Setup(tr.t) }); err != nil {
		return 0, err
	}
	defer func() {
		for _, w := range tr.workers {
			sink ^= w.sink
		}
		err = errors.Join(err, tr.teardown())
	}()
	if err := tr.bind(b); err != nil {
		return 0, err
	}
	if p.Mode == result.SampleTime {
		tr.timerNs = timerCost()
	}
	var sched *Schedule
	if p.Lockstep {
		s, err := p.Await()
		if err != nil {
			return 0, err
		}
		sched = &s
	}
	j := 0 // iterations so far, warmups included
	if err := tr.phase(p.Warmup, true, sched, &j, emit); err != nil {
		return 0, err
	}
	return 0, tr.phase(p.Measure, false, sched, &j, emit)
}

// checkPlan refuses a plan Run cannot follow.
func checkPlan(b *Benchmark, p *Plan) error {
	switch {
	case p.Mode == "":
		return fmt.Errorf("%s: the plan has no mode", b.ID())
	case !(p.Plant >= 0 && p.Plant <= MaxPlant):
		return fmt.Errorf("%s: planted slowdown %g: want 0 to %g", b.ID(), p.Plant, MaxPlant)
	case p.Profile != "" && (!profile.Kind(p.Profile).InProcess() || p.ProfilePath == ""):
		return fmt.Errorf("profile %q: not an in-process profiler, or no path", p.Profile)
	case p.Lockstep && p.Await == nil:
		return fmt.Errorf("%s: the plan asks for lockstep and nothing waits for the schedule", b.ID())
	}
	return nil
}

// phase runs the iterations of spec (the warmup's when warm) and emits
// each; j counts the trial's iterations so far, which sched times. The
// plan's in-process profile covers the measurement phase.
func (tr *trialRun) phase(spec result.IterSpec, warm bool, sched *Schedule, j *int, emit func(*result.Iteration) error) error {
	p := tr.plan
	var session *profile.Session
	if p.Profile != "" && !warm {
		var err error
		if session, err = profile.Start(profile.Kind(p.Profile)); err != nil {
			return err
		}
	}
	for i := 0; i < spec.Count; i++ {
		var at time.Time
		if sched != nil {
			at = sched.At(p, *j)
		}
		*j++
		it, err := tr.iteration(spec, at, warm)
		if err != nil {
			if session != nil {
				_ = session.Stop(p.ProfilePath)
			}
			return err
		}
		if !at.IsZero() {
			it.ScheduledUnixNano = at.UnixNano()
		}
		it.Fork, it.Index, it.Warmup = p.Fork, i, warm
		if err := emit(it); err != nil {
			return err
		}
	}
	if session != nil {
		return session.Stop(p.ProfilePath)
	}
	return nil
}

// bind creates the group instances and the workers.
func (tr *trialRun) bind(b *Benchmark) error {
	t, p := tr.t, tr.plan
	if err := t.checkOps(); err != nil {
		return &PhaseError{Phase: "setup", Err: err}
	}
	size := t.groupSize()
	threads := p.Threads
	if threads == 0 {
		threads = b.Goroutines
	}
	if threads == 0 {
		threads = size * max(p.Instances, 1)
	}
	if threads%size != 0 {
		// As JMH does for @Group: round up to whole group instances (the
		// group's size is known only now, after Setup), and say so.
		rounded := (threads + size - 1) / size * size
		fmt.Fprintf(os.Stderr, "harness: %s: %d goroutines is not a multiple of the group size %d: running %d (%d group instances)\n",
			b.FullName(), threads, size, rounded, rounded/size)
		threads = rounded
	}
	t.threads = threads
	opi := int64(b.opsPerInvocation())
	for gi := 0; gi < threads/size; gi++ {
		g := &Group{Index: gi}
		tr.groups = append(tr.groups, g)
		if t.groupSetup != nil {
			if err := safely("group setup", func() error { return t.groupSetup(g) }); err != nil {
				return err
			}
		}
		for oi := range t.ops {
			op := &t.ops[oi]
			for range max(op.Goroutines, 1) {
				id := len(tr.workers)
				w := &Worker{id: id, opIndex: oi, op: op, group: g, trial: t, batch: 1, opi: opi,
					rng: rand.New(rand.NewPCG(p.Seed, uint64(id)+1))}
				tr.workers = append(tr.workers, w)
				if err := safely("bind", func() error {
					body, err := op.Bind(w)
					if err == nil && body == nil {
						err = errors.New("Bind returned a nil body")
					}
					w.body = body
					return err
				}); err != nil {
					return err
				}
			}
		}
	}
	for _, w := range tr.workers {
		w.label = profile.Kind(p.Profile) == profile.CPU
		w.plant = p.Plant
		w.sharp = t.hasInvocation() || w.group.hasInvocation() || w.hasInvocation()
		if p.Mode == result.SampleTime {
			w.hist = newHistogram()
		}
	}
	return nil
}

// teardown runs the trial-level teardowns of every state that was set up:
// workers, then group instances, then the benchmark state, each in
// reverse registration order. Every teardown runs; errors are joined.
func (tr *trialRun) teardown() error {
	var errs []error
	for i := len(tr.workers) - 1; i >= 0; i-- {
		w := tr.workers[i]
		errs = append(errs, safely("teardown", func() error { return runAll(w.teardown, true) }))
	}
	for i := len(tr.groups) - 1; i >= 0; i-- {
		g := tr.groups[i]
		errs = append(errs, safely("teardown", func() error { return runAll(g.teardown, true) }))
	}
	errs = append(errs, safely("teardown", func() error { return runAll(tr.t.teardown, true) }))
	return errors.Join(errs...)
}

// iteration runs one iteration: iteration setups, a GC, the wait for
// at (when not zero), the frequency probe and memory statistics around
// the workers' run, then the iteration teardowns. A warmup iteration
// (warm) runs with perf's events off.
func (tr *trialRun) iteration(spec result.IterSpec, at time.Time, warm bool) (*result.Iteration, error) {
	if err := tr.setupIteration(); err != nil {
		return nil, err
	}
	host := tr.host.TakeSample()
	ir := prepareWorkers(tr.workers, tr.plan.Mode, spec)
	if !warm { // perf counts or samples the measurement only
		ir.perf = tr.perf
	}
	runtime.GC()
	waitUntil(at) // the schedule of a duet: both sides start here together
	probeBefore := hostcheck.Probe()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start := time.Now()
	startWall := start.UnixNano()
	results, runErr := ir.run()
	wall := time.Since(start)
	runtime.ReadMemStats(&m1)
	probeAfter := hostcheck.Probe()
	if err := errors.Join(runErr, tr.teardownIteration()); err != nil {
		return nil, err
	}
	it := &result.Iteration{
		Counted:       ir.counted,
		WallNs:        wall.Nanoseconds(),
		AllocBytes:    m1.TotalAlloc - m0.TotalAlloc,
		Allocs:        m1.Mallocs - m0.Mallocs,
		GCs:           m1.NumGC - m0.NumGC,
		ProbeBefore:   probeBefore,
		ProbeAfter:    probeAfter,
		TimerNs:       tr.timerNs,
		StartUnixNano: startWall,
	}
	it.Flagged = it.Drift() > tr.plan.ProbeTolerance
	after := tr.host.TakeSample()
	it.TempC, it.StealPct = after.TempC, hostcheck.StealPct(host, after)
	tr.totals(it, results)
	if err := finiteMetrics(it); err != nil {
		return nil, &PhaseError{Phase: "iteration", Err: err}
	}
	return it, nil
}

// setupIteration runs the iteration setups of every state: the trial's,
// then each group's, then each worker's.
func (tr *trialRun) setupIteration() error {
	return safely("iteration setup", func() error {
		if err := runAll(tr.t.iterSetup, false); err != nil {
			return err
		}
		for _, g := range tr.groups {
			if err := runAll(g.iterSetup, false); err != nil {
				return err
			}
		}
		for _, w := range tr.workers {
			if err := runAll(w.iterSetup, false); err != nil {
				return err
			}
		}
		return nil
	})
}

// teardownIteration runs the iteration teardowns in the reverse order:
// every one runs, and their errors are joined.
func (tr *trialRun) teardownIteration() error {
	return safely("iteration teardown", func() error {
		var errs []error
		for i := len(tr.workers) - 1; i >= 0; i-- {
			errs = append(errs, runAll(tr.workers[i].iterTeardown, true))
		}
		for i := len(tr.groups) - 1; i >= 0; i-- {
			errs = append(errs, runAll(tr.groups[i].iterTeardown, true))
		}
		errs = append(errs, runAll(tr.t.iterTeardown, true))
		return errors.Join(errs...)
	})
}

// totals fills in it the ops executed, the workers' aggregate with the
// trial's custom metrics, and, for a group benchmark, each op's.
func (tr *trialRun) totals(it *result.Iteration, results []workerResult) {
	t := tr.t
	all := make([]int, len(tr.workers))
	for i := range all {
		all[i] = i
		it.Executed += results[i].executed
	}
	it.Total = aggregate("", tr.workers, results, all)
	for unit, v := range t.metrics {
		if it.Total.Metrics == nil {
			it.Total.Metrics = map[string]float64{}
		}
		it.Total.Metrics[unit] = v
	}
	if t.group {
		for oi, op := range t.ops {
			var idx []int
			for i, w := range tr.workers {
				if w.opIndex == oi {
					idx = append(idx, i)
				}
			}
			it.Ops = append(it.Ops, aggregate(op.Name, tr.workers, results, idx))
		}
	}
}

// finiteMetrics refuses an iteration whose custom metric is NaN or
// infinite, naming it: no result format can carry one to a comparison.
func finiteMetrics(it *result.Iteration) error {
	for _, s := range append([]result.OpStats{it.Total}, it.Ops...) {
		for _, unit := range slices.Sorted(maps.Keys(s.Metrics)) {
			if v := s.Metrics[unit]; math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("metric %q is %v: a metric must be a finite number", unit, v)
			}
		}
	}
	return nil
}

// aggregate sums the results of the workers at idx.
func aggregate(name string, workers []*Worker, results []workerResult, idx []int) result.OpStats {
	s := result.OpStats{Name: name, Workers: len(idx)}
	var nsSum float64
	var timed int
	counters := map[string]float64{}
	var hist *histogram
	for _, i := range idx {
		r := &results[i]
		s.Ops += r.ops
		if r.ops > 0 && r.ns > 0 {
			nsSum += float64(r.ns) / float64(r.ops)
			s.OpsPerSec += float64(r.ops) / (float64(r.ns) / 1e9)
			timed++
		}
		for k, c := range workers[i].counters {
			counters[c.unit] += r.counters[k]
		}
		if r.hist != nil {
			if hist == nil {
				hist = newHistogram()
			}
			hist.h.Merge(r.hist.h)
		}
	}
	if timed > 0 {
		s.NsPerOp = nsSum / float64(timed)
	}
	if len(counters) > 0 {
		s.Metrics = map[string]float64{}
		for unit, n := range counters {
			if s.Ops > 0 {
				s.Metrics[unit] = n / float64(s.Ops)
			} else {
				s.Metrics[unit] = 0
			}
		}
	}
	if hist != nil {
		if enc, err := hist.h.Encode(hdrV2); err == nil {
			s.Hist = enc
		}
	}
	return s
}
