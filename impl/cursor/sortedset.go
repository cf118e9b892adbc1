package cursor

import (
	"fmt"
	"slices"
	"sync"
)

type entry struct {
	pos   Position
	order uint64
	name  string
}

func compareEntries(x, y entry) int {
	if c := x.pos.Compare(y.pos); c != 0 {
		return c
	}
	switch {
	case x.order < y.order:
		return -1
	case x.order > y.order:
		return 1
	}
	return 0
}

// SortedSet is the benchmark's comparison container: cursors in a set
// sorted by (position, add order); a count scans it from the start.
type SortedSet struct {
	mu     sync.RWMutex
	sorted []entry
	byName map[string]entry
	adds   uint64
}

// NewSortedSet returns an empty container.
func NewSortedSet() *SortedSet { return &SortedSet{byName: map[string]entry{}} }

func (s *SortedSet) Size() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.byName)
}

func (s *SortedSet) insert(e entry) {
	i, _ := slices.BinarySearchFunc(s.sorted, e, compareEntries)
	s.sorted = slices.Insert(s.sorted, i, e)
	s.byName[e.name] = e
}

func (s *SortedSet) delete(e entry) {
	if i, ok := slices.BinarySearchFunc(s.sorted, e, compareEntries); ok {
		s.sorted = slices.Delete(s.sorted, i, i+1)
	}
	delete(s.byName, e.name)
}

func (s *SortedSet) Add(name string, pos Position) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byName[name]; ok {
		return fmt.Errorf("%w: %s", ErrDuplicate, name)
	}
	s.adds++
	s.insert(entry{pos, s.adds, name})
	return nil
}

func (s *SortedSet) Update(name string, pos Position) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byName[name]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknown, name)
	}
	s.delete(e)
	e.pos = pos
	s.insert(e)
	return nil
}

func (s *SortedSet) Remove(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byName[name]
	if ok {
		s.delete(e)
	}
	return ok
}

func (s *SortedSet) CountAtOrBefore(name string) (int, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.byName[name]
	if !ok {
		return 0, true
	}
	n := 0
	for _, x := range s.sorted {
		if x.pos.Compare(e.pos) > 0 {
			break
		}
		n++
	}
	return n, true
}

func (s *SortedSet) Slowest() (Position, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.sorted) == 0 {
		return Position{}, false
	}
	return s.sorted[0].pos, true
}
