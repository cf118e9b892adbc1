package cache

import (
	"errors"
	"sync"
)

// RemovalQueue holds every wrapper inserted into the range caches that
// share it, in insertion order (a requeued one moves to the tail), and
// evicts from its head (PIP-430's RangeCacheRemovalQueue). Producers add
// concurrently; eviction runs one at a time.
type RemovalQueue struct {
	mu sync.Mutex // guards ring, head and n
	// ring holds the queue in a circular buffer of a power-of-two
	// length: n wrappers from index head on, wrapping around. It doubles
	// when full and halves when under a quarter full, so an add or a poll
	// copies nothing in the steady state (a slice compacted by copying
	// its live part to a new one cost a tail insert 12 % of its time in
	// growing the copy again).
	ring    []*wrapper
	head, n int

	evict sync.Mutex // one consumer at a time

	maxRequeue          int  // requeues of an entry with expected reads
	extendTTLOfAccessed bool // requeue recently accessed entries

	clock func() int64 // nanoseconds; nil: the monotonic clock
}

// NewRemovalQueue returns a queue; maxRequeue bounds how often an entry
// with remaining expected reads is requeued, extendTTLOfAccessed requeues
// entries read since they were queued.
func NewRemovalQueue(maxRequeue int, extendTTLOfAccessed bool) *RemovalQueue {
	return &RemovalQueue{maxRequeue: maxRequeue, extendTTLOfAccessed: extendTTLOfAccessed}
}

// WithClock makes the queue stamp insertions and requeues with clock
// (nanoseconds) instead of the monotonic clock, for simulations in virtual
// time. Set it before the queue is used; it returns q.
func (q *RemovalQueue) WithClock(clock func() int64) *RemovalQueue {
	q.clock = clock
	return q
}

// Now is the queue's clock in nanoseconds: the time EvictBefore compares
// stamps with.
func (q *RemovalQueue) Now() int64 {
	if q.clock != nil {
		return q.clock()
	}
	return nanotime()
}

func (q *RemovalQueue) add(w *wrapper) {
	q.mu.Lock()
	q.addLocked(w)
	q.mu.Unlock()
}

func (q *RemovalQueue) addLocked(w *wrapper) {
	if q.n == len(q.ring) {
		q.resize(max(2*len(q.ring), minRing))
	}
	q.ring[(q.head+q.n)&(len(q.ring)-1)] = w
	q.n++
}

// minRing is the ring's least length.
const minRing = 64

// resize moves the queue to a ring of size slots (a power of two that
// holds it), head first; the caller holds mu.
func (q *RemovalQueue) resize(size int) {
	next := make([]*wrapper, size)
	if q.n > 0 {
		k := copy(next, q.ring[q.head:min(q.head+q.n, len(q.ring))])
		copy(next[k:], q.ring[:q.n-k])
	}
	q.ring, q.head = next, 0
}

func (q *RemovalQueue) peek() *wrapper {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.headLocked()
}

func (q *RemovalQueue) headLocked() *wrapper {
	if q.n == 0 {
		return nil
	}
	return q.ring[q.head]
}

// next drops the head, which the caller saw with peek or next (one
// evicting goroutine at a time, so it is still there), queues it again at
// the tail when requeue, and returns the new head: one lock where a poll,
// an add and a peek took three.
func (q *RemovalQueue) next(requeue bool) *wrapper {
	q.mu.Lock()
	defer q.mu.Unlock()
	w := q.ring[q.head]
	q.pollLocked()
	if requeue {
		q.addLocked(w)
	}
	return q.headLocked()
}

func (q *RemovalQueue) pollLocked() {
	q.ring[q.head] = nil
	q.head = (q.head + 1) & (len(q.ring) - 1)
	q.n--
	if len(q.ring) > minRing && q.n < len(q.ring)/4 {
		q.resize(len(q.ring) / 2)
	}
}

// Len is the number of wrappers queued (removed ones included until an
// eviction reaches them).
func (q *RemovalQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

type verdict int

const (
	remove verdict = iota
	requeue
	stop
	missing
)

func (q *RemovalQueue) shouldRequeue(w *wrapper) bool {
	v := w.value.Load()
	return (q.extendTTLOfAccessed && w.accessed.Load()) ||
		(v != nil && v.HasExpectedReads() && w.requeue < q.maxRequeue)
}

// EvictBefore removes the entries inserted (or requeued) before the
// time ts (of the queue's clock, see Now), requeueing those that qualify; it returns the entries and
// bytes removed.
func (q *RemovalQueue) EvictBefore(ts int64) (int, int64) {
	return q.run(func(w *wrapper, _ *counters) verdict {
		if w.stamp >= ts {
			return stop
		}
		if q.shouldRequeue(w) {
			return requeue
		}
		return remove
	})
}

// ErrNonPositiveSize is returned by EvictLeastAccessed for a size ≤ 0.
var ErrNonPositiveSize = errors.New("size to free must be positive")

// EvictLeastAccessed removes entries from the head until size bytes are
// freed, requeueing those that qualify.
func (q *RemovalQueue) EvictLeastAccessed(size int64) (int, int64, error) {
	if size <= 0 {
		return 0, 0, ErrNonPositiveSize
	}
	n, b := q.run(func(w *wrapper, c *counters) verdict {
		if c.bytes >= size {
			return stop
		}
		if q.shouldRequeue(w) {
			return requeue
		}
		return remove
	})
	return n, b, nil
}

func (q *RemovalQueue) run(decide func(*wrapper, *counters) verdict) (int, int64) {
	q.evict.Lock()
	defer q.evict.Unlock()
	var c counters
	for w := q.peek(); w != nil; {
		// A wrapper whose entry was removed never holds one again (each
		// insert makes a new wrapper), so it is dropped without its lock.
		if w.key.Load() == nil {
			w = q.next(false)
			continue
		}
		var v verdict
		w.withWriteLock(func(w *wrapper) bool {
			if w.key.Load() == nil {
				v = missing
				return false
			}
			v = decide(w, &c)
			switch v {
			case remove:
				w.cache.removeEntry(w.key.Load(), w.value.Load(), w, &c, true)
			case requeue:
				w.markRequeued(q.Now())
			}
			return true
		})
		if v == stop {
			break
		}
		w = q.next(v == requeue)
	}
	return c.entries, c.bytes
}
