// Package measure is the measuring core: the declarations a benchmark
// author writes (Benchmark, Param, and the states Trial, Group and
// Worker, which package harness names for programs), the Plan of one
// trial, and Run, which runs a trial in this process. Run creates the
// states, runs Setup, the binds and every hook in JMH's order, drives
// the workers through synchronized warmup and measurement iterations,
// and aggregates each iteration into a result.Iteration.
//
// The engine (package engine) plans trials and calls Run in a fork
// child or in process; harness.RunB calls it under testing.B. Nothing
// here parses flags, spawns processes or writes files, and no error it
// returns names a command-line flag.
//
// Run applies no defaults of its own: the Plan names the mode, the
// iterations and the tolerance. A failure of the benchmark's own code is
// a *PhaseError with its lifecycle phase and, for a panic, its stack;
// the trial's teardowns run even when an iteration fails.
//
// # Concurrency
//
// Run is called once per trial, from one goroutine. Bind and hooks run
// on the runner's goroutine or the worker's own; a worker's body,
// counters and Sink are used only by that worker's goroutine. Inside the
// measured window the workers synchronize on atomics only (no channel,
// mutex or WaitGroup), so the core allocates nothing there.
package measure
