package cursor

import (
	"errors"
	"fmt"
)

// Position is a (ledger, entry) position.
type Position struct{ Ledger, Entry int64 }

// Compare orders positions by ledger, then entry.
func (p Position) Compare(q Position) int {
	switch {
	case p.Ledger != q.Ledger:
		if p.Ledger < q.Ledger {
			return -1
		}
		return 1
	case p.Entry < q.Entry:
		return -1
	case p.Entry > q.Entry:
		return 1
	}
	return 0
}

// After returns the position n entries after p (n < 1: p itself).
func (p Position) After(n int64) Position {
	if n < 1 {
		return p
	}
	if p.Entry < 0 {
		return Position{p.Ledger, n - 1}
	}
	return Position{p.Ledger, p.Entry + n}
}

// Container tracks active cursors by position.
type Container interface {
	Add(name string, pos Position) error
	Update(name string, pos Position) error
	Remove(name string) bool
	// CountAtOrBefore returns how many cursors are at name's position or
	// before it; ok is false when the implementation cannot count.
	CountAtOrBefore(name string) (n int, ok bool)
	Slowest() (Position, bool)
	Size() int
}

// Errors of Add and Update.
var (
	ErrDuplicate = errors.New("cursor already tracked")
	ErrUnknown   = errors.New("cursor not tracked")
)

// Implementations names the containers, PIP-430's first.
var Implementations = []string{"active", "sortedset", "heap"}

// New returns the named implementation.
func New(name string) (Container, error) {
	switch name {
	case "active":
		return NewActive(), nil
	case "sortedset":
		return NewSortedSet(), nil
	case "heap":
		return NewHeap(), nil
	}
	return nil, fmt.Errorf("unknown cursor container %q (valid: active, sortedset, heap)", name)
}
