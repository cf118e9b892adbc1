// Package profile collects and summarizes per-benchmark profiles.
//
// In-process profilers run inside a profiling fork and cover only its
// measurement iterations ([Start]): cpu (runtime/pprof, samples outside
// the workers' measured windows are dropped by label), offcpu (fgprof's
// wall-clock view of every goroutine, on and off CPU; it perturbs timing),
// block and mutex (rate 1 from the start of the trial; the profiles are
// cumulative, so the file holds the difference of snapshots taken at the
// start and the end of the measurement iterations), and allocs (the
// difference of the allocation profile likewise, every allocation
// recorded: its counts are counts, not a sample's estimates). The three
// cumulative profiles hold the workers' ramps too, and are divided by every
// op the window executed ([Kind.Cumulative]).
//
// Wrapping profilers run the fork under another program: instructions
// runs it under valgrind's callgrind with GOMAXPROCS=1, GOGC=off and
// asynchronous preemption off, collecting only inside the harness's
// measured loop ([CallgrindCommand], [ParseCallgrind]), which gives an exact
// instruction count per op, and whose output [ReadCallgrind] reads by
// position (address, file, line), each position's functions inlined
// there named from the executable's DWARF by [ReadInlining]; perf reports hardware counters where the host
// has them and says why not where it does not ([PerfStatus]).
//
// [Summarize] reads a profile with google/pprof's profile package and
// returns its top frames per op; [WriteMarkdown] renders summaries, with
// the implementations of one benchmark side by side.
//
// Functions here are safe for concurrent use except Start, of which one
// session may run per process.
package profile
