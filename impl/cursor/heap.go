package cursor

import (
	"fmt"
	"sync"
)

type heapItem struct {
	name string
	pos  Position
	idx  int
}

// Heap is the legacy ManagedCursorContainer: a binary min-heap by
// position with each item's index, which knows the slowest cursor and
// cannot count.
type Heap struct {
	mu     sync.RWMutex
	items  []*heapItem
	byName map[string]*heapItem
}

// NewHeap returns an empty container.
func NewHeap() *Heap { return &Heap{byName: map[string]*heapItem{}} }

func (h *Heap) Size() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.items)
}

func (h *Heap) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].idx, h.items[j].idx = i, j
}

func (h *Heap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h.items[p].pos.Compare(h.items[i].pos) <= 0 {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *Heap) down(i int) {
	for {
		l, small := 2*i+1, i
		if l < len(h.items) && h.items[l].pos.Compare(h.items[small].pos) < 0 {
			small = l
		}
		if r := l + 1; r < len(h.items) && h.items[r].pos.Compare(h.items[small].pos) < 0 {
			small = r
		}
		if small == i {
			return
		}
		h.swap(i, small)
		i = small
	}
}

func (h *Heap) Add(name string, pos Position) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.byName[name]; ok {
		return fmt.Errorf("%w: %s", ErrDuplicate, name)
	}
	it := &heapItem{name: name, pos: pos, idx: len(h.items)}
	h.items = append(h.items, it)
	h.byName[name] = it
	h.up(it.idx)
	return nil
}

func (h *Heap) Update(name string, pos Position) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	it, ok := h.byName[name]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknown, name)
	}
	it.pos = pos
	h.up(it.idx)
	h.down(it.idx)
	return nil
}

func (h *Heap) Remove(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	it, ok := h.byName[name]
	if !ok {
		return false
	}
	delete(h.byName, name)
	last := len(h.items) - 1
	i := it.idx
	h.swap(i, last)
	h.items = h.items[:last]
	if i < last {
		h.up(i)
		h.down(i)
	}
	return true
}

// CountAtOrBefore is not supported by the legacy container.
func (h *Heap) CountAtOrBefore(string) (int, bool) { return 0, false }

func (h *Heap) Slowest() (Position, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if len(h.items) == 0 {
		return Position{}, false
	}
	return h.items[0].pos, true
}
