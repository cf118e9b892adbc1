// Package skiplist is a concurrent ordered map, the Go counterpart of the
// parts of Java's ConcurrentSkipListMap that the broker entry cache uses:
// get, put-if-absent, remove-if-value, floor, ceiling, and ascending
// iteration from a key, weakly consistent under concurrent writers. No Go
// library reachable here offers range-from iteration on a concurrent map.
//
// The algorithm is the lazy skip list of Herlihy, Lev, Luchangco and
// Shavit ("A Simple Optimistic Skiplist Algorithm", 2007): searches take
// no lock; an insert locks the predecessors of the new node, validates
// that they still link to the successors it saw, and links the node level
// by level before marking it fully linked; a removal marks the victim
// under its lock (the linearization point), then locks and validates its
// predecessors and unlinks it. A key is present when its node is fully
// linked and not marked.
//
// Contract: single-key operations (Get, PutIfAbsent, Remove, RemoveIf)
// are linearizable; Floor, Ceiling and an [Iter] (Seek, then Next: a
// value that allocates nothing and calls no function per key) return keys
// that were present at some moment during the call or walk, in ascending
// order, each at most once, and see every key present throughout it.
// Values are stored as given and never copied; V is compared with == by
// RemoveIf. All methods are safe for concurrent use, also from inside a
// walk or All's callback.
package skiplist
