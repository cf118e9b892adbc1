// Package explain says which functions moved when a benchmark's row
// changed: from CPU profiles of both sides of an A/B comparison, taken in
// profiling forks paired by round as the measured forks are (never inside
// a measured fork), it estimates each function's change in CPU time per
// op with an interval over the pairs, names a function only when its
// change is significant after false-discovery control over the
// functions, and gives its share of the profiles' whole change.
//
// [Load] reads the profiling forks of one side; [Diff] compares two
// sides' forks pair by pair; [Write] leaves, for one case, both sides'
// merged profiles, a difference profile that go tool pprof reads, the
// text report and a differential flame graph ([FlameSVG]).
//
// Attribution is pprof's: a sample's flat time goes to its leaf frame,
// the innermost of the functions inlined at its first location, and its
// cumulative time to every function on its stack once, inlined ones
// included. A generic function is named without its type arguments
// ([FuncName]), so one made generic between the revisions is compared
// with itself.
//
// With instructions counted by callgrind, [Count] reads one side's
// counts per op by function and source line (inlined functions named
// from the program's DWARF) and [CompareCounts] compares two sides
// as counted: a function is named when its flat change is at least
// [InstructionsFloor] of the baseline's whole, and the first named
// function's changed lines are matched across the revisions by their
// text ([WriteInstructions] leaves the report).
//
// [CountAllocs] reads a side's allocation profiling fork (every
// allocation recorded) per op by function, and [CompareAllocs] names the
// functions whose allocations per op changed by at least [AllocsFloor]
// and [AllocsShare] of the baseline's ([WriteAllocs]).
//
// Two sides whose profiling forks' programs say different Go versions
// get a note: the runtime's functions and the compiler's inlining differ
// by the toolchain alone.
//
// Functions here are safe for concurrent use; they share no state.
package explain
