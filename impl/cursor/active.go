package cursor

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

type node struct {
	name    string
	pos     *Position // applied position; nil while not in the list
	pending Position  // position to apply while queued
	queued  bool
	removed bool
	counter *int32 // shared by the node's position group
	order   uint64 // add order: ties keep it
	prev    *node
	next    *node
}

// Active is PIP-430's ActiveManagedCursorContainerImpl.
type Active struct {
	mu       sync.Mutex
	nodes    map[string]*node
	head     *node
	tail     *node
	queue    []*node // nodes with a pending position
	removals []*node // removed nodes still linked
	tracked  int     // nodes in the list
	adds     uint64
	count    atomic.Int32
	dirty    atomic.Int32 // pending changes: the optimistic slowest read needs none
	slowest  atomic.Pointer[Position]
	sinceCmp int
}

// NewActive returns an empty container.
func NewActive() *Active { return &Active{nodes: map[string]*node{}} }

func (a *Active) Size() int { return int(a.count.Load()) }

func (a *Active) Add(name string, pos Position) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.nodes[name]; ok {
		return fmt.Errorf("%w: %s", ErrDuplicate, name)
	}
	a.adds++
	n := &node{name: name, order: a.adds}
	a.nodes[name] = n
	a.setPending(n, pos)
	a.count.Add(1)
	return nil
}

func (a *Active) Update(name string, pos Position) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	n, ok := a.nodes[name]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknown, name)
	}
	a.setPending(n, pos)
	return nil
}

func (a *Active) setPending(n *node, pos Position) {
	n.pending = pos
	if !n.queued {
		n.queued = true
		a.queue = append(a.queue, n)
		a.dirty.Add(1)
	}
}

func (a *Active) Remove(name string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	n, ok := a.nodes[name]
	if !ok {
		return false
	}
	delete(a.nodes, name)
	n.removed = true
	if n.pos != nil {
		a.removals = append(a.removals, n)
		a.dirty.Add(1)
	}
	a.count.Add(-1)
	if a.sinceCmp++; a.sinceCmp >= max(64, int(a.count.Load())) || a.count.Load() == 0 {
		a.process() // compaction
	}
	return true
}

func (a *Active) CountAtOrBefore(name string) (int, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.process()
	n, ok := a.nodes[name]
	if !ok || n.pos == nil {
		return 0, true
	}
	return int(*n.counter), true
}

func (a *Active) Slowest() (Position, bool) {
	if a.dirty.Load() == 0 {
		if p := a.slowest.Load(); p != nil {
			return *p, true
		}
		if a.count.Load() == 0 {
			return Position{}, false
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.process()
	if a.head == nil {
		return Position{}, false
	}
	return *a.head.pos, true
}

// process applies every pending change (the caller holds the lock).
func (a *Active) process() {
	if len(a.queue) == 0 && len(a.removals) == 0 {
		return
	}
	if len(a.queue) >= max(a.tracked/2, 1) {
		a.rebuild()
	} else {
		if len(a.removals) == 1 {
			a.unlink(a.removals[0])
		} else if len(a.removals) > 1 {
			a.sweep()
		}
		for _, n := range a.queue {
			n.queued = false
			if n.removed {
				continue
			}
			switch q := n.pending; {
			case n.pos != nil && q.Compare(*n.pos) >= 0:
				a.moveForward(n, q)
			default:
				a.unlink(n)
				n.pos = &q
				a.insert(n)
			}
		}
	}
	a.queue, a.removals, a.sinceCmp = a.queue[:0], a.removals[:0], 0
	a.dirty.Store(0)
	if a.head != nil {
		p := *a.head.pos
		a.slowest.Store(&p)
	} else {
		a.slowest.Store(nil)
	}
}

// unlink takes n out of the list and decrements, once each, the counter
// of its group (when others share it) and of every later group.
func (a *Active) unlink(n *node) {
	if n.pos == nil {
		return
	}
	var last *int32
	if (n.prev != nil && n.prev.counter == n.counter) || (n.next != nil && n.next.counter == n.counter) {
		*n.counter--
		last = n.counter
	}
	for x := n.next; x != nil; x = x.next {
		if x.counter != last {
			*x.counter--
			last = x.counter
		}
	}
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		a.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		a.tail = n.prev
	}
	n.prev, n.next, n.pos, n.counter = nil, nil, nil, nil
	a.tracked--
}

// sweep unlinks every removed node in one pass and recounts the groups:
// one walk of the list instead of one walk of its tail per removal.
func (a *Active) sweep() {
	var i int32
	for x := a.head; x != nil; {
		next := x.next
		if x.removed {
			if x.prev != nil {
				x.prev.next = next
			} else {
				a.head = next
			}
			if next != nil {
				next.prev = x.prev
			} else {
				a.tail = x.prev
			}
			x.prev, x.next, x.pos, x.counter = nil, nil, nil, nil
			a.tracked--
		} else {
			i++
			*x.counter = i // the group's last member sets its final count
		}
		x = next
	}
}

// moveForward moves a linked node forward from its position P to q ≥ P,
// walking only the nodes in between: the groups after P and before q
// count one cursor fewer, P's group too when n shared it, and the groups
// at or after q are unchanged (n was and stays at or before them).
func (a *Active) moveForward(n *node, q Position) {
	if q.Compare(*n.pos) == 0 {
		return
	}
	last := n.counter
	if (n.prev != nil && n.prev.counter == n.counter) || (n.next != nil && n.next.counter == n.counter) {
		*n.counter--
	}
	prev, x := n.prev, n.next
	for x != nil && x.pos.Compare(q) <= 0 {
		if x.counter != last && x.pos.Compare(q) < 0 {
			*x.counter--
			last = x.counter
		}
		prev, x = x, x.next
	}
	if prev == n.prev { // still in place: only the position changes
		n.pos = &q
		c := int32(1)
		if prev != nil {
			c = *prev.counter + 1
		}
		n.counter = &c
		return
	}
	// unlink n, then link it between prev and x.
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		a.head = n.next
	}
	n.next.prev = n.prev // n.next != nil: n moved past it
	n.prev, n.next = prev, x
	prev.next = n
	if x != nil {
		x.prev = n
	} else {
		a.tail = n
	}
	n.pos = &q
	if prev.pos.Compare(q) == 0 {
		n.counter = prev.counter
	} else {
		c := *prev.counter + 1
		n.counter = &c
	}
}

// insert links n (its pos set) after every node at or before its position
// and fixes the counters: it joins an equal group's counter or gets a new
// one, and every later group counts one more.
func (a *Active) insert(n *node) {
	var prev *node
	x := a.head
	if a.tail != nil && a.tail.pos.Compare(*n.pos) <= 0 {
		prev, x = a.tail, nil // at or after the newest: nothing to walk
	}
	for x != nil && x.pos.Compare(*n.pos) <= 0 {
		prev, x = x, x.next
	}
	n.prev, n.next = prev, x
	if prev != nil {
		prev.next = n
	} else {
		a.head = n
	}
	if x != nil {
		x.prev = n
	} else {
		a.tail = n
	}
	switch {
	case prev != nil && prev.pos.Compare(*n.pos) == 0:
		n.counter = prev.counter
		*n.counter++
	case prev != nil:
		c := *prev.counter + 1
		n.counter = &c
	default:
		c := int32(1)
		n.counter = &c
	}
	var last *int32
	for y := x; y != nil; y = y.next {
		if y.counter != last {
			*y.counter++
			last = y.counter
		}
	}
	a.tracked++
}

// rebuild relinks every live node in position order (ties by add order)
// and recounts the groups in one pass.
func (a *Active) rebuild() {
	var live []*node
	for x := a.head; x != nil; x = x.next {
		if !x.removed && !x.queued {
			live = append(live, x)
		}
	}
	for _, n := range a.queue {
		n.queued = false
		if !n.removed {
			p := n.pending
			n.pos = &p
			live = append(live, n)
		}
	}
	for _, n := range a.removals {
		n.pos = nil
	}
	slices.SortStableFunc(live, func(x, y *node) int {
		if c := x.pos.Compare(*y.pos); c != 0 {
			return c
		}
		switch {
		case x.order < y.order:
			return -1
		case x.order > y.order:
			return 1
		}
		return 0
	})
	a.head, a.tail, a.tracked = nil, nil, len(live)
	var prev *node
	for i, n := range live {
		n.prev, n.next = prev, nil
		if prev != nil {
			prev.next = n
		} else {
			a.head = n
		}
		prev = n
		if i > 0 && live[i-1].pos.Compare(*n.pos) == 0 {
			n.counter = live[i-1].counter
			*n.counter = int32(i + 1)
		} else {
			c := int32(i + 1)
			n.counter = &c
		}
	}
	a.tail = prev
}
