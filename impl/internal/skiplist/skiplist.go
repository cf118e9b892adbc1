package skiplist

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// maxLevel bounds the tower height: 2^24 keys at p = 1/2 per level.
const maxLevel = 24

type node[K any, V comparable] struct {
	key         K
	val         V
	next        []atomic.Pointer[node[K, V]]
	mu          sync.Mutex
	marked      atomic.Bool
	fullyLinked atomic.Bool
	topLevel    int
}

func (n *node[K, V]) present() bool { return n.fullyLinked.Load() && !n.marked.Load() }

// Map is a concurrent ordered map from K, ordered by a comparator, to V.
type Map[K any, V comparable] struct {
	cmp  func(a, b K) int
	head *node[K, V]
	size atomic.Int64
	seed atomic.Uint64
	// top is the highest level any node was ever given (it never goes
	// down): searches start there instead of at maxLevel-1. It is raised
	// before a taller node is linked, so every level above it is empty.
	top atomic.Int32
}

// raise makes top at least l.
func (m *Map[K, V]) raise(l int) {
	for {
		t := m.top.Load()
		if int(t) >= l || m.top.CompareAndSwap(t, int32(l)) {
			return
		}
	}
}

// New returns an empty map ordered by cmp (negative, zero or positive as
// a is before, equal to or after b).
func New[K any, V comparable](cmp func(a, b K) int) *Map[K, V] {
	h := &node[K, V]{next: make([]atomic.Pointer[node[K, V]], maxLevel), topLevel: maxLevel - 1}
	h.fullyLinked.Store(true)
	return &Map[K, V]{cmp: cmp, head: h}
}

// Len is the number of keys present (exact when no writer is running).
func (m *Map[K, V]) Len() int { return int(m.size.Load()) }

// randomLevel draws a tower height with P(level ≥ l) = 2^-l.
func (m *Map[K, V]) randomLevel() int {
	x := m.seed.Add(0x9e3779b97f4a7c15)
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	return min(bits.TrailingZeros64(x|1<<(maxLevel-1)), maxLevel-1)
}

// find fills preds and succs with the neighbours of key at every level and
// returns the highest level at which a node with key was found, or -1.
func (m *Map[K, V]) find(key K, preds, succs *[maxLevel]*node[K, V]) int {
	found := -1
	pred := m.head
	start := int(m.top.Load())
	for level := maxLevel - 1; level > start; level-- {
		preds[level], succs[level] = m.head, m.head.next[level].Load()
	}
	for level := start; level >= 0; level-- {
		curr := pred.next[level].Load()
		for curr != nil && m.cmp(curr.key, key) < 0 {
			pred = curr
			curr = pred.next[level].Load()
		}
		if found == -1 && curr != nil && m.cmp(curr.key, key) == 0 {
			found = level
		}
		preds[level], succs[level] = pred, curr
	}
	return found
}

// Get returns the value of key.
func (m *Map[K, V]) Get(key K) (V, bool) {
	pred := m.head
	for level := int(m.top.Load()); level >= 0; level-- {
		curr := pred.next[level].Load()
		for curr != nil && m.cmp(curr.key, key) < 0 {
			pred = curr
			curr = pred.next[level].Load()
		}
		if curr != nil && m.cmp(curr.key, key) == 0 {
			if curr.present() {
				return curr.val, true
			}
			var zero V
			return zero, false
		}
	}
	var zero V
	return zero, false
}

// unlockPreds unlocks the distinct predecessors locked up to level top.
func unlockPreds[K any, V comparable](preds *[maxLevel]*node[K, V], top int) {
	var prev *node[K, V]
	for level := 0; level <= top; level++ {
		if preds[level] != prev {
			preds[level].mu.Unlock()
			prev = preds[level]
		}
	}
}

// PutIfAbsent stores val under key unless key is present, and returns the
// value now stored and whether it was already there.
func (m *Map[K, V]) PutIfAbsent(key K, val V) (actual V, loaded bool) {
	top := m.randomLevel()
	m.raise(top)
	var preds, succs [maxLevel]*node[K, V]
	for {
		if found := m.find(key, &preds, &succs); found != -1 {
			n := succs[found]
			if !n.marked.Load() {
				for !n.fullyLinked.Load() {
					runtime.Gosched() // an insert of the same key is linking it
				}
				return n.val, true
			}
			continue // being removed: try again
		}
		locked, valid := -1, true
		var prev *node[K, V]
		for level := 0; valid && level <= top; level++ {
			pred, succ := preds[level], succs[level]
			if pred != prev {
				pred.mu.Lock()
				prev = pred
			}
			locked = level
			valid = !pred.marked.Load() && (succ == nil || !succ.marked.Load()) && pred.next[level].Load() == succ
		}
		if !valid {
			unlockPreds(&preds, locked)
			continue
		}
		n := &node[K, V]{key: key, val: val, next: make([]atomic.Pointer[node[K, V]], top+1), topLevel: top}
		for level := 0; level <= top; level++ {
			n.next[level].Store(succs[level])
		}
		for level := 0; level <= top; level++ {
			preds[level].next[level].Store(n)
		}
		n.fullyLinked.Store(true)
		unlockPreds(&preds, locked)
		m.size.Add(1)
		return val, false
	}
}

// Remove removes key and returns its value.
func (m *Map[K, V]) Remove(key K) (V, bool) { return m.remove(key, nil) }

// RemoveIf removes key only if it maps to val (Java's remove(key, value)).
func (m *Map[K, V]) RemoveIf(key K, val V) bool {
	_, ok := m.remove(key, func(v V) bool { return v == val })
	return ok
}

func (m *Map[K, V]) remove(key K, match func(V) bool) (V, bool) {
	var zero V
	var victim *node[K, V]
	marked, top := false, -1
	var preds, succs [maxLevel]*node[K, V]
	for {
		found := m.find(key, &preds, &succs)
		if !marked {
			if found == -1 {
				return zero, false
			}
			victim = succs[found]
			if !victim.fullyLinked.Load() || victim.topLevel != found || victim.marked.Load() {
				if victim.marked.Load() {
					return zero, false
				}
				runtime.Gosched()
				continue // not fully linked yet: look again
			}
			top = victim.topLevel
			victim.mu.Lock()
			if victim.marked.Load() {
				victim.mu.Unlock()
				return zero, false
			}
			if match != nil && !match(victim.val) {
				victim.mu.Unlock()
				return zero, false
			}
			victim.marked.Store(true) // the linearization point
			marked = true
		}
		locked, valid := -1, true
		var prev *node[K, V]
		for level := 0; valid && level <= top; level++ {
			pred := preds[level]
			if pred != prev {
				pred.mu.Lock()
				prev = pred
			}
			locked = level
			valid = !pred.marked.Load() && pred.next[level].Load() == victim
		}
		if !valid {
			unlockPreds(&preds, locked)
			continue
		}
		for level := top; level >= 0; level-- {
			preds[level].next[level].Store(victim.next[level].Load())
		}
		victim.mu.Unlock()
		unlockPreds(&preds, locked)
		m.size.Add(-1)
		return victim.val, true
	}
}

// lastAtMost returns the last node whose key is at most key (before it
// when strict), or the head.
func (m *Map[K, V]) lastAtMost(key K, strict bool) *node[K, V] {
	x := m.head
	for level := int(m.top.Load()); level >= 0; level-- {
		for {
			nx := x.next[level].Load()
			if nx == nil {
				break
			}
			c := m.cmp(nx.key, key)
			if c > 0 || (strict && c == 0) {
				break
			}
			x = nx
		}
	}
	return x
}

// Floor returns the greatest key at most key, and its value.
func (m *Map[K, V]) Floor(key K) (K, V, bool) {
	strict := false
	for {
		x := m.lastAtMost(key, strict)
		if x == m.head {
			var zk K
			var zv V
			return zk, zv, false
		}
		if x.present() {
			return x.key, x.val, true
		}
		key, strict = x.key, true // being inserted or removed: look below it
	}
}

// firstAtLeast returns the first present node whose key is at least key.
// A node inserted after the search passed its place, or one being
// removed, is stepped over: the walk on level 0 checks each key again.
func (m *Map[K, V]) firstAtLeast(key K) *node[K, V] {
	x := m.head
	var n *node[K, V]
	for level := int(m.top.Load()); level >= 0; level-- {
		for {
			n = x.next[level].Load()
			if n == nil || m.cmp(n.key, key) >= 0 {
				break
			}
			x = n
		}
	}
	for n != nil && (!n.present() || m.cmp(n.key, key) < 0) {
		n = n.next[0].Load()
	}
	return n
}

// Ceiling returns the least key at least key, and its value.
func (m *Map[K, V]) Ceiling(key K) (K, V, bool) {
	if n := m.firstAtLeast(key); n != nil {
		return n.key, n.val, true
	}
	var zk K
	var zv V
	return zk, zv, false
}

// Iter is a position in the map's ascending order. It is weakly
// consistent: it sees every key present throughout the walk and any
// subset of the keys inserted or removed meanwhile, in order. It is a
// value: walking allocates nothing and calls no function per key.
type Iter[K any, V comparable] struct{ n *node[K, V] }

// Seek returns an iterator at the first key at least from.
func (m *Map[K, V]) Seek(from K) Iter[K, V] { return Iter[K, V]{m.firstAtLeast(from)} }

// Valid reports whether the iterator is at a key (false past the last).
func (it *Iter[K, V]) Valid() bool { return it.n != nil }

// Key and Value are the key and value at the iterator; call them only
// while Valid.
func (it *Iter[K, V]) Key() K   { return it.n.key }
func (it *Iter[K, V]) Value() V { return it.n.val }

// Next moves to the next present key.
func (it *Iter[K, V]) Next() {
	n := it.n.next[0].Load()
	for n != nil && !n.present() {
		n = n.next[0].Load()
	}
	it.n = n
}

// All calls fn for every key in order until it returns false.
func (m *Map[K, V]) All(fn func(K, V) bool) {
	for n := m.head.next[0].Load(); n != nil; n = n.next[0].Load() {
		if n.present() && !fn(n.key, n.val) {
			return
		}
	}
}
