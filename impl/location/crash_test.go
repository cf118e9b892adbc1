package location

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCrashBeforeCommit stops a flush and then a compaction just before
// their manifest commits, abandons the store without closing it (a
// crash), and reopens the directory: every key written before is
// readable, from the old tables and the write-ahead log, and the tables
// the interrupted work wrote are removed.
func TestCrashBeforeCommit(t *testing.T) {
	defer func() { crashBeforeCommit = nil }()
	for _, stage := range []string{"flush", "compaction"} {
		t.Run(stage, func(t *testing.T) {
			dir := t.TempDir()
			c := testCache(t, 1<<20)
			o := Options{Dir: dir, CreateIfMissing: true, Cache: c, DisableAutoCompaction: true,
				Table: TableOptions{BlockSize: 1024, MetadataBlockSize: 512}, MemtableSize: 1 << 30}
			s, err := Open(o)
			if err != nil {
				t.Fatal(err)
			}
			put := func(l, from, to int64) {
				var ks, vs [][]byte
				for e := from; e < to; e++ {
					ks, vs = append(ks, EncodeKey(l, e)), append(vs, EncodeValue(uint64(l*1e6+e)))
				}
				if err := s.Apply(ks, vs); err != nil {
					t.Fatal(err)
				}
			}
			put(1, 0, 2000)
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			put(2, 0, 2000)
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			put(3, 0, 500) // only in the log and the memtable
			before, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
			crashBeforeCommit = func() bool { return true }
			if stage == "flush" {
				err = s.Flush()
			} else {
				err = s.Compact() // its flush of ledger 3 crashes first
				crashBeforeCommit = nil
				if err == nil {
					t.Fatal("no crash")
				}
				// flush cleanly, then crash the compaction itself
				if err = s.Flush(); err != nil {
					t.Fatal(err)
				}
				crashBeforeCommit = func() bool { return true }
				err = s.Compact()
			}
			crashBeforeCommit = nil
			if !errors.Is(err, errSimulatedCrash) {
				t.Fatalf("%s: %v, want the simulated crash", stage, err)
			}
			during, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
			if len(during) <= len(before) && stage == "compaction" {
				t.Fatalf("the crashed compaction wrote no table (%d before, %d after)", len(before), len(during))
			}
			// the crash: s is abandoned, its files left open
			r, err := Open(Options{Dir: dir, Cache: testCache(t, 1<<20)})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for l := int64(1); l <= 3; l++ {
				n := int64(2000)
				if l == 3 {
					n = 500
				}
				for e := int64(0); e < n; e += 7 {
					v, err := r.Get(EncodeKey(l, e), nil)
					if err != nil {
						t.Fatalf("after the crash: (%d, %d): %v", l, e, err)
					}
					if got, _ := DecodeValue(v); got != uint64(l*1e6+e) {
						t.Fatalf("after the crash: (%d, %d) = %d", l, e, got)
					}
				}
			}
			live := map[string]bool{}
			for _, lv := range r.man.Levels {
				for _, f := range lv {
					live[filepath.Base(tableName(dir, f.Num))] = true
				}
			}
			after, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
			for _, p := range after {
				if !live[filepath.Base(p)] {
					t.Errorf("orphan %s left after reopening", filepath.Base(p))
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); err != nil {
				t.Fatal(err)
			}
			s.closeTables()
		})
	}
}
