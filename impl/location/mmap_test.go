//go:build unix

package location

import (
	"errors"
	"os"
	"testing"
)

// TestMappedTableCutShort: a table file cut short while it is mapped
// (which no store does: tables are immutable) makes a read of the lost
// part fail with an error, as a file's ReadAt past its end would, instead
// of crashing the process with SIGBUS; the part still there reads.
func TestMappedTableCutShort(t *testing.T) {
	dir := t.TempDir()
	path, _ := writeTable(t, dir, TableOptions{Layout: Partitioned, BlockSize: 512, MetadataBlockSize: 256}, 3, 300)
	tb, err := openTable(path, 1, testCache(t, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer tb.close()
	if _, ok := tb.f.(*mappedFile); !ok {
		t.Fatalf("the table is read through %T, want a memory map", tb.f)
	}
	first := EncodeKey(1, 0)
	if _, ok, err := tb.lookup(first, keyHash(first), nil, true); err != nil || !ok {
		t.Fatalf("lookup before the cut: %v %v", ok, err)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	if _, err := tb.f.ReadAt(buf, 0); err == nil {
		t.Fatal("a read of a mapped page the file no longer has succeeded")
	}
	last := EncodeKey(3, 3*299)
	_, _, err = tb.lookup(last, keyHash(last), nil, true)
	if err == nil || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("lookup after the cut: %v, want an error wrapping ErrCorrupt", err)
	}
}
