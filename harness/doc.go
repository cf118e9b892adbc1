// Package harness is a JMH-style benchmark runner for Go.
//
// A [Benchmark] declares a name, parameters ([Param]), a default mode and
// goroutine count, and a Setup function. Setup runs once per trial (one
// trial per fork) and builds the benchmark-scope state; it declares either
// one op that every worker goroutine runs ([Trial.Run]) or an asymmetric
// group of ops ([Trial.Group]). An op's Bind runs once per worker and
// returns the body, a closure over the worker's own state, which the
// runner calls once per invocation.
//
// # Semantics (JMH → here)
//
//   - Modes: [AverageTime] ns/op, [Throughput] ops/s, [SampleTime] per-op
//     latency percentiles (HdrHistogram; the clock read's cost is measured
//     and reported), [SingleShot] one invocation per iteration, cold.
//   - Iterations by time or by op count, and forks: options of the run.
//   - @Param: declared axes expanded to their cartesian product, overridden
//     per run (-p name=v1,v2); names are "BenchmarkX/a=1/b=2".
//   - @State scopes: Benchmark ([Trial]), Group ([Group]) and Thread
//     ([Worker]), each with iteration and invocation hooks (OnIteration,
//     OnInvocation) and a trial teardown (OnTeardown); the trial setup of a
//     scope is the function that creates it (Setup, GroupSetup, Bind).
//     Iteration hooks run once per iteration per state instance, outside
//     the measured window; invocation hooks run around every invocation of
//     every worker that uses the state (serialized for shared states) and
//     force a clock read pair per invocation, as in JMH.
//   - @Threads / @GroupThreads: [Benchmark.Goroutines], [Op.Goroutines];
//     a group benchmark runs Goroutines/groupSize group instances.
//   - Synchronized iterations: every worker runs at least one op before
//     any window opens, each measures only between the start and stop
//     signals (at least one batch), and every worker keeps running until
//     every window has closed.
//   - Blackhole: [Worker.Sink] and [Sink].
//   - @OperationsPerInvocation: [Benchmark.OpsPerInvocation].
//   - -prof gc: B/op, allocs/op and GC cycles/op per iteration, from
//     runtime.ReadMemStats at the iteration's boundaries with a GC before
//     it; the harness allocates nothing inside the window.
//   - Custom metrics: [Worker.Counter], reported per measured op.
//
// In avgt and thrpt modes the op runs in calibrated batches (about 20 µs,
// unrolled by four) between clock reads, never one clock read per op. A
// frequency probe runs before and after every iteration; an iteration
// whose probe moved more than the run's tolerance (5 %) is flagged.
//
// # Running
//
// Declarations are run by a program that calls benchctl.Main (package
// benchctl): it re-executes itself for every fork, so each measurement
// runs in a fresh process, and it writes Go benchmark-format and JMH JSON
// results. [RunB] runs the same declarations under `go test -bench`. A
// failure of the benchmark's code (an error or panic in Setup, Bind, a
// hook or the op) is reported with its lifecycle phase and stack; a failed
// fork never stops a run.
//
// [Register] records the import path of the calling package: it is the
// pkg key of the benchmark's results. Suites are free-form names; a suite
// exists because a benchmark declares it, and every benchmark is in "all".
//
// # The measuring core
//
// The states an author's code receives are run by this package's own
// core, which reads what a worker keeps inside the measured window
// without a call through an interface. A runner (the engine of benchctl,
// in a fork child or in process, and [RunB] under testing.B) expands a
// benchmark's parameters ([Expand]), describes one trial with a [Plan]
// and calls [Run]: it creates the states, runs Setup, the binds and every
// hook in JMH's order, drives the workers through synchronized warmup and
// measurement iterations and emits each iteration as a result.Iteration.
// Run applies no defaults of its own: the Plan names the mode, the
// iterations and the tolerance. A failure of the benchmark's own code is
// a *[PhaseError] with its lifecycle phase and, for a panic, its stack;
// the trial's teardowns run even when an iteration fails. Nothing here
// parses flags, spawns processes or writes files.
//
// # Concurrency
//
// A Registry is safe for concurrent use. A Trial, Group or Worker belongs
// to one trial: Bind and hooks run on the runner's goroutine or the
// worker's own; a worker's body, counters and Sink are used only by that
// worker's goroutine. Shared state created in Setup or GroupSetup is the
// benchmark's to synchronize. Run is called once per trial, from one
// goroutine; inside the measured window the workers synchronize on
// atomics only (no channel, mutex or WaitGroup), so the core allocates
// nothing there.
package harness
