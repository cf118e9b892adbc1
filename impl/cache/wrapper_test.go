package cache

import (
	"sync/atomic"
	"testing"
	"unsafe"
)

// TestInitPointer checks what initPointer relies on: an atomic.Pointer is
// its pointer and nothing else, so a plain store through it is what a
// Load returns.
func TestInitPointer(t *testing.T) {
	var p atomic.Pointer[Position]
	if got, want := unsafe.Sizeof(p), unsafe.Sizeof(uintptr(0)); got != want {
		t.Fatalf("atomic.Pointer takes %d bytes, a pointer %d: initPointer's plain store would miss its value", got, want)
	}
	pos := &Position{Ledger: 3, Entry: 7}
	initPointer(&p, pos)
	if got := p.Load(); got != pos {
		t.Fatalf("Load after initPointer = %p, want %p", got, pos)
	}
	w := &wrapper{pos: *pos}
	initPointer(&w.key, &w.pos)
	if k := w.key.Load(); k != &w.pos || *k != *pos {
		t.Fatalf("a wrapper's key after initPointer = %v, want its own pos %v", k, pos)
	}
}
