// Package cursor is the benchmark family of the active cursor container
// (apache/pulsar#24623, PIP-430; JMH's ActiveManagedCursorContainerBenchmark).
//
// Every benchmark takes impl=active|sortedset|heap (PIP-430's container,
// the sorted-set comparison and the legacy min-heap) and cursors=10|100|500
// cursors, cursor i starting at (0, i). The seek benchmarks also take
// ratio=0|1|10|100: every ratio-th op asks the container how many cursors
// are at the seeked cursor's position or before it (0: never). The heap
// cannot count; as in the PIP-430 version of the Java benchmark it then
// returns the entry ID instead, and counted/op reports how many ops did
// count, so its ratio>0 rows are visibly not counting.
//
//   - SeekForward01 and SeekForward10: 1 or 10 goroutines each move a
//     random cursor 1–99 entries forward (+ the optional count). Positions
//     are shared by all goroutines, as in Java; two goroutines moving one
//     cursor may update the container out of order, which every
//     implementation accepts (a move to any position).
//   - Slowest01 and Slowest10: the slowest cursor's position.
//   - Churn: one goroutine removes the oldest cursor and adds a new one at
//     the next position, keeping the number of cursors constant. (The Java
//     version removes cursors[0] by name every op, which only removes
//     anything once, so its container grows for the whole run.)
//
// Op counts are per goroutine call; results are in the thrpt mode, as in
// Java (ops/s). Importing the package registers the family in
// harness.Default, suite "cursor" (not "cache": its 72 seek cases would
// triple the quick cache run).
package cursor
