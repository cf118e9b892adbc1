package location

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// faultStore opens a store in dir with small tables and a cache of its
// own (or c), writes ledger l entries [0, n) with locations l*1e6+e, and
// flushes the first flushed of them to tables.
func faultStore(t *testing.T, dir string, c *BlockCache, l int64, flushed, n int64) *Store {
	t.Helper()
	if c == nil {
		c = testCache(t, 1<<20)
	}
	s, err := Open(Options{Dir: dir, CreateIfMissing: true, Cache: c, DisableAutoCompaction: true,
		Table: TableOptions{BlockSize: 1024, MetadataBlockSize: 512}, MemtableSize: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	for e := int64(0); e < n; e += 100 {
		var ks, vs [][]byte
		for i := e; i < min(e+100, n); i++ {
			ks, vs = append(ks, EncodeKey(l, i)), append(vs, EncodeValue(uint64(l*1e6+i)))
		}
		if err := s.Apply(ks, vs); err != nil {
			t.Fatal(err)
		}
		if e+100 == flushed {
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	return s
}

// wrongReads counts the entries of ledger l in [0, n) that s does not
// return with their own location.
func wrongReads(t *testing.T, s *Store, l, n int64) int {
	t.Helper()
	wrong := 0
	for e := int64(0); e < n; e++ {
		v, err := s.Get(EncodeKey(l, e), nil)
		if err != nil {
			wrong++
			continue
		}
		if loc, _ := DecodeValue(v); loc != uint64(l*1e6+e) {
			wrong++
		}
	}
	return wrong
}

// TestMissingManifestIsCorruption: a directory whose MANIFEST is gone but
// whose tables are there is corruption, with or without CreateIfMissing;
// nothing is deleted, and with the manifest back every key reads.
func TestMissingManifestIsCorruption(t *testing.T) {
	dir := t.TempDir()
	s := faultStore(t, dir, nil, 1, 4000, 4500)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	man := filepath.Join(dir, "MANIFEST")
	saved, err := os.ReadFile(man)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(man)
	before, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	for _, create := range []bool{false, true} {
		_, err := Open(Options{Dir: dir, CreateIfMissing: create, Cache: testCache(t, 1<<20)})
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("CreateIfMissing=%v: Open = %v, want ErrCorrupt", create, err)
		}
	}
	after, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(before) == 0 || len(after) != len(before) {
		t.Fatalf("tables %d before, %d after the refused opens", len(before), len(after))
	}
	os.WriteFile(man, saved, 0o644)
	r, err := Open(Options{Dir: dir, Cache: testCache(t, 1<<20)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if n := wrongReads(t, r, 1, 4500); n != 0 {
		t.Errorf("%d of 4500 keys lost", n)
	}
}

// TestWALCorruptionInTheMiddle: one flipped byte in an early record, with
// intact records after it, fails the open with ErrCorrupt and keeps the
// log; a torn tail (the last record cut short) is dropped and the store
// opens with everything before it.
func TestWALCorruptionInTheMiddle(t *testing.T) {
	write := func(t *testing.T) (string, string) {
		dir := t.TempDir()
		s := faultStore(t, dir, nil, 1, -1, 1000) // ten batches, all in the log
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		if len(logs) != 1 {
			t.Fatalf("%d logs", len(logs))
		}
		_ = s // abandoned, as by a crash: the log is the only copy
		return dir, logs[0]
	}
	t.Run("middle", func(t *testing.T) {
		dir, log := write(t)
		b, _ := os.ReadFile(log)
		b[100] ^= 0x40 // inside the first batch's payload
		os.WriteFile(log, b, 0o644)
		_, err := Open(Options{Dir: dir, Cache: testCache(t, 1<<20)})
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Open = %v, want ErrCorrupt", err)
		}
		if got, _ := os.ReadFile(log); len(got) != len(b) {
			t.Errorf("the log was removed or changed (%d → %d bytes)", len(b), len(got))
		}
	})
	t.Run("torn tail", func(t *testing.T) {
		dir, log := write(t)
		b, _ := os.ReadFile(log)
		os.WriteFile(log, b[:len(b)-10], 0o644) // the last batch cut short
		r, err := Open(Options{Dir: dir, Cache: testCache(t, 1<<20)})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if n := wrongReads(t, r, 1, 900); n != 0 {
			t.Errorf("%d of the 900 entries before the torn batch lost", n)
		}
		if _, err := r.Get(EncodeKey(1, 950), nil); !errors.Is(err, ErrNotFound) {
			t.Errorf("an entry of the torn batch: %v, want ErrNotFound", err)
		}
	})
}

// TestSharedCacheKeepsStoresApart: two stores that share one BlockCache,
// with the same file numbers and different locations, each read their
// own data.
func TestSharedCacheKeepsStoresApart(t *testing.T) {
	c := testCache(t, 8<<20)
	a := faultStore(t, t.TempDir(), c, 1, 2000, 2000)
	defer a.Close()
	b := faultStore(t, t.TempDir(), c, 2, 2000, 2000)
	defer b.Close()
	// Ledger 1 of a and ledger 2 of b have the same table layout; read a
	// first so its blocks are cached, then b.
	if n := wrongReads(t, a, 1, 2000); n != 0 {
		t.Fatalf("store a: %d wrong", n)
	}
	if n := wrongReads(t, b, 2, 2000); n != 0 {
		t.Errorf("store b read %d of 2000 entries wrong through the shared cache", n)
	}
}

// TestWALLengthFlipInALargeRecord: a flipped length in a record larger
// than the forward scan's window used to be taken for a torn tail, the
// records after it dropped and the log deleted. Whatever the damaged
// record's size, first or in the middle, replay refuses it.
func TestWALLengthFlipInALargeRecord(t *testing.T) {
	batch := func(first, n int) (keys, values [][]byte) {
		for i := range n {
			keys = append(keys, EncodeKey(int64(first+i), 1))
			values = append(values, EncodeValue(uint64(first+i)))
		}
		return keys, values
	}
	for name, sizes := range map[string][]int{
		"first":  {60_000, 10},
		"middle": {10, 60_000, 10, 10},
	} {
		dir := t.TempDir()
		l, err := createWAL(dir, 1)
		if err != nil {
			t.Fatal(err)
		}
		offsets, off, key := []int{}, 0, 0
		for _, n := range sizes {
			k, v := batch(key, n)
			key += n
			if err := l.append(k, v, false); err != nil {
				t.Fatal(err)
			}
			offsets = append(offsets, off)
			off += walHeader + len(l.buf)
		}
		l.close()
		path := logName(dir, 1)
		b, _ := os.ReadFile(path)
		big := offsets[slices.Index(sizes, 60_000)]
		b[big+2] ^= 0x10 // the large record's length, above its 1 MiB
		os.WriteFile(path, b, 0o644)
		n := 0
		err = replayWAL(path, func(k, v []byte) error { n++; return nil })
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: replay = %v after %d of %d keys, want ErrCorrupt", name, err, n, key)
		}
	}
}

// TestOpenRemovesOnlyItsOwnLeftovers: opening a store removes what an
// interrupted manifest replacement left (.MANIFEST.tmp…), not every file
// whose name holds ".tmp".
func TestOpenRemovesOnlyItsOwnLeftovers(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, Cache: testCache(t, 1<<20)})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	keep := []string{"notes.tmp.txt", "data.tmp", "x.tmp.sst"}
	for _, name := range append(keep, ".MANIFEST.tmp1234") {
		os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644)
	}
	s, err = Open(Options{Dir: dir, Cache: testCache(t, 1<<20)})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, name := range keep {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("Open removed %s, not a file of the store's: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".MANIFEST.tmp1234")); err == nil {
		t.Error("Open left an interrupted manifest replacement")
	}
}
