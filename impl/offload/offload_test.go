package offload

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func entries(n, size int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([][]byte, n)
	for i := range out {
		b := make([]byte, r.IntN(size)+1)
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		out[i] = b
	}
	return out
}

func store(t *testing.T, es [][]byte, blockSize int) *FileStore {
	t.Helper()
	s := &FileStore{Dir: t.TempDir()}
	if err := Offload(s, "ledger-7", 7, es, blockSize); err != nil {
		t.Fatal(err)
	}
	return s
}

func caches() map[string]func() OffsetCache {
	return map[string]func() OffsetCache{
		"none":   func() OffsetCache { return NoCache{} },
		"handle": func() OffsetCache { return NewHandleCache(DefaultHandleTTL, nil) },
		"shared": func() OffsetCache { return NewSharedCache(DefaultSharedTTL, DefaultSharedSize, nil) },
	}
}

// TestEveryRange reads every range of a generated ledger (small blocks so
// ranges cross many of them) and gets exactly the entries written.
func TestEveryRange(t *testing.T) {
	es := entries(60, 90, 1)
	s := store(t, es, 512)
	for name, mk := range caches() {
		t.Run(name, func(t *testing.T) {
			h, err := Open(s, "ledger-7", mk())
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if len(h.Index().Entries) < 6 {
				t.Fatalf("only %d blocks: the test wants many", len(h.Index().Entries))
			}
			for first := int64(0); first < 60; first++ {
				for last := first; last < 60; last++ {
					got, err := h.Read(first, last)
					if err != nil {
						t.Fatalf("Read(%d, %d): %v", first, last, err)
					}
					if int64(len(got)) != last-first+1 {
						t.Fatalf("Read(%d, %d): %d entries", first, last, len(got))
					}
					for i, e := range got {
						if e.ID != first+int64(i) || !bytes.Equal(e.Data, es[e.ID]) {
							t.Fatalf("Read(%d, %d)[%d] = entry %d, wrong id or data", first, last, i, e.ID)
						}
					}
				}
			}
		})
	}
}

func TestBadRanges(t *testing.T) {
	h, err := Open(store(t, entries(10, 50, 2), 512), "ledger-7", NoCache{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int64{{-1, 3}, {5, 4}, {0, 10}, {10, 10}} {
		if _, err := h.Read(r[0], r[1]); !errors.Is(err, ErrBadRange) {
			t.Errorf("Read(%d, %d) = %v, want ErrBadRange", r[0], r[1], err)
		}
	}
}

// TestBackwardSeekLandsOnTheOffset: with a cache, a backward seek parses
// nothing before the entry (only the header after it, which checks its
// length); without one it parses from the block start.
func TestBackwardSeekLandsOnTheOffset(t *testing.T) {
	es := entries(200, 100, 3)
	s := store(t, es, 8192)
	for name, mk := range caches() {
		h, _ := Open(s, "ledger-7", mk())
		if _, err := h.Read(0, 150); err != nil {
			t.Fatal(err)
		}
		h.Stats = Stats{}
		got, err := h.Read(120, 120)
		if err != nil || len(got) != 1 || got[0].ID != 120 {
			t.Fatalf("%s: %v %v", name, got, err)
		}
		// The entry's record, and the next record's header, which checks
		// that the entry's length ends where a record begins.
		exact := int64(recordHeaderLen+len(es[120])) + recordHeaderLen
		if name == "none" {
			if h.Stats.BytesParsed <= exact {
				t.Errorf("none: parsed %d bytes for one entry of %d: expected a parse from the block start", h.Stats.BytesParsed, exact)
			}
		} else if h.Stats.BytesParsed != exact {
			t.Errorf("%s: parsed %d bytes, want exactly the entry's %d", name, h.Stats.BytesParsed, exact)
		}
		h.Close()
	}
}

func TestHandleCacheTTL(t *testing.T) {
	now := time.Unix(0, 0)
	c := NewHandleCache(time.Minute, func() time.Time { return now })
	c.Put(7, 1, 100)
	now = now.Add(50 * time.Second)
	if off, ok := c.Get(7, 1); !ok || off != 100 {
		t.Fatal("fresh entry missing")
	}
	now = now.Add(50 * time.Second) // 50 s after the last access: still there
	if _, ok := c.Get(7, 1); !ok {
		t.Fatal("the TTL is not after access")
	}
	now = now.Add(61 * time.Second)
	if _, ok := c.Get(7, 1); ok || c.Len() != 0 {
		t.Fatal("an expired offset was returned")
	}
}

func TestSharedCacheTTLSizeAndDisable(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	c := NewSharedCache(time.Minute, 3, clock)
	for e := int64(0); e < 3; e++ {
		c.Put(1, e, e*10)
	}
	c.Get(1, 0) // 0 becomes the most recent: 1 is the oldest
	c.Put(2, 0, 99)
	if _, ok := c.Get(1, 1); ok || c.Len() != 3 {
		t.Fatalf("size bound: entry 1 kept or len %d", c.Len())
	}
	if off, ok := c.Get(2, 0); !ok || off != 99 {
		t.Fatal("ledgers are not told apart")
	}
	now = now.Add(2 * time.Minute)
	c.Put(1, 9, 90)
	c.CleanUp()
	if c.Len() != 1 {
		t.Fatalf("CleanUp left %d offsets, want the fresh one", c.Len())
	}
	off := NewSharedCache(time.Minute, 0, clock)
	off.Put(1, 1, 1)
	if _, ok := off.Get(1, 1); ok || off.Len() != 0 {
		t.Fatal("size 0 does not disable the cache")
	}
}

// corrupt writes a ledger, lets f damage its data, and reads entries.
func corrupt(t *testing.T, f func(data []byte, ix *Index)) error {
	es := entries(40, 60, 4)
	data, ix, err := Write(7, es, 1024)
	if err != nil {
		t.Fatal(err)
	}
	f(data, ix)
	s := &FileStore{Dir: t.TempDir()}
	b, _ := ix.MarshalBinary()
	s.Put("l", data)
	s.Put("l.index", b)
	h, err := Open(s, "l", NewHandleCache(time.Hour, nil))
	if err != nil {
		return err
	}
	defer h.Close()
	_, err = h.Read(0, ix.LAC)
	return err
}

func TestCorruptRecords(t *testing.T) {
	for name, damage := range map[string]func([]byte, *Index){
		"negative length": func(d []byte, ix *Index) {
			binary.BigEndian.PutUint32(d[blockHeaderLen:], uint32(0xfffffff0))
		},
		"oversized length": func(d []byte, ix *Index) {
			binary.BigEndian.PutUint32(d[blockHeaderLen:], 1<<30)
		},
		"wrong entry id": func(d []byte, ix *Index) {
			binary.BigEndian.PutUint64(d[blockHeaderLen+4:], 77)
		},
		"truncated payload": func(d []byte, ix *Index) {
			last := ix.Entries[len(ix.Entries)-1].Offset
			binary.BigEndian.PutUint32(d[last+4:], uint32(len(d)-int(last))) // claims records past the end
		},
		"bad block header": func(d []byte, ix *Index) {
			copy(d[ix.Entries[1].Offset:], "XXXX")
		},
	} {
		err := corrupt(t, damage)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
}

func FuzzReadCorrupt(f *testing.F) {
	es := entries(20, 40, 5)
	data, ix, _ := Write(7, es, 256)
	f.Add(0, byte(0xff))
	f.Add(20, byte(0x00))
	f.Fuzz(func(t *testing.T, at int, v byte) {
		if at < 0 || at >= len(data) {
			return
		}
		d := append([]byte(nil), data...)
		d[at] ^= v | 1
		dir := t.TempDir()
		s := &FileStore{Dir: dir}
		b, _ := ix.MarshalBinary()
		s.Put("l", d)
		s.Put("l.index", b)
		h, err := Open(s, "l", NewHandleCache(time.Hour, nil))
		if err != nil {
			return
		}
		defer h.Close()
		got, err := h.Read(0, ix.LAC)
		if err != nil {
			return
		}
		// No error: every entry returned must be the right one. Payload
		// bytes are not checksummed, so a flipped payload byte reads back
		// flipped; ids and lengths must match.
		for i, e := range got {
			if e.ID != int64(i) || len(e.Data) != len(es[i]) {
				t.Fatalf("entry %d read as id %d with %d bytes", i, e.ID, len(e.Data))
			}
		}
	})
}

func TestIndexCorrupt(t *testing.T) {
	_, ix, _ := Write(7, entries(10, 20, 6), 256)
	b, _ := ix.MarshalBinary()
	b[10] ^= 1
	if err := new(Index).UnmarshalBinary(b); !errors.Is(err, ErrCorrupt) {
		t.Errorf("flipped index byte: %v", err)
	}
	s := &FileStore{Dir: t.TempDir()}
	if err := s.Put("../x", nil); err == nil {
		t.Error("a key with a path separator was accepted")
	}
	os.WriteFile(filepath.Join(s.Dir, "l.index"), b, 0o644)
	if _, err := Open(s, "l", nil); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Open with a corrupt index: %v", err)
	}
	if _, _, err := Write(1, [][]byte{make([]byte, 300)}, 256); err == nil {
		t.Error("an entry bigger than a block was accepted")
	}
}
