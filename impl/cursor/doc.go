// Package cursor is the active cursor container of PIP-430 (apache/pulsar#24623): for a cursor, how many active
// cursors are at its position or before it (the expected read count of an
// entry read for that cursor), and the slowest position.
//
// [Active] keeps the cursors in a list sorted by position; cursors at one
// position share one counter holding the number of cursors at or before
// it, so a count query is O(1) once pending changes are applied. Adds,
// moves and removals are only recorded (pending) and applied on the next
// query: incrementally, or by rebuilding the list when at least half of
// the tracked cursors are pending. Removals are also applied every
// max(64, cursors) removals (compaction). Mutations and queries take one
// lock; the slowest position is read without it while nothing is pending.
//
// Two comparison implementations have the same interface: [SortedSet]
// (a sorted set counted by a linear scan) and [Heap] (the legacy min-heap
// that only knows the slowest cursor; it cannot count).
//
// All implementations are safe for concurrent use.
package cursor
