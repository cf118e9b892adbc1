package cache

import (
	"sync/atomic"
	"testing"
	"unsafe"
)

// TestInitPointer checks what initPointer and initFlags rely on: an
// atomic.Pointer is its pointer and an atomic.Uint32 its value, nothing
// else, so a plain store through either is what a Load returns.
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
	var f atomic.Uint32
	if got := unsafe.Sizeof(f); got != 4 {
		t.Fatalf("atomic.Uint32 takes %d bytes: initFlags's plain store would miss its value", got)
	}
	initFlags(&f, flagNoReadOnRelease)
	if got := f.Load(); got != flagNoReadOnRelease {
		t.Fatalf("Load after initFlags = %d, want %d", got, flagNoReadOnRelease)
	}
	w := &wrapper{pos: *pos}
	initPointer(&w.key, &w.pos)
	if k := w.key.Load(); k != &w.pos || *k != *pos {
		t.Fatalf("a wrapper's key after initPointer = %v, want its own pos %v", k, pos)
	}
}

// TestEntryIsOneCacheLine checks the layout Entry's comment promises: 64
// bytes, so the allocator's 64-byte class gives each entry its own cache
// line, with the position and the count in its first 24 bytes.
func TestEntryIsOneCacheLine(t *testing.T) {
	var e Entry
	if got := unsafe.Sizeof(e); got != 64 {
		t.Fatalf("an Entry takes %d bytes, want 64", got)
	}
	if end := unsafe.Offsetof(e.refCnt) + unsafe.Sizeof(e.refCnt); end > 24 {
		t.Errorf("refCnt ends at byte %d, want it beside the position (≤ 24)", end)
	}
	for i := int64(0); i < 16; i++ {
		if p := uintptr(unsafe.Pointer(NewEntry(1, i, nil, 0, nil))); p%64 != 0 {
			t.Fatalf("entry %d at %#x: not on a 64-byte boundary", i, p)
		}
	}
}
