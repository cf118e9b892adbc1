package location

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

func testCache(t testing.TB, capacity int64) *BlockCache {
	t.Helper()
	c, err := NewBlockCache(CacheOptions{Capacity: capacity, ShardBits: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// writeTable writes keys (ledger l, entry 3·i for i < n per ledger, so
// that absent keys sit between present ones) with value l·1e6+e.
func writeTable(t testing.TB, dir string, o TableOptions, ledgers, perLedger int) (string, TableInfo) {
	t.Helper()
	if err := o.fill(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%v.sst", o.Layout, o.Compress))
	w, err := newTableWriter(path, o)
	if err != nil {
		t.Fatal(err)
	}
	for l := 1; l <= ledgers; l++ {
		for i := 0; i < perLedger; i++ {
			e := int64(3 * i)
			if err := w.add(EncodeKey(int64(l), e), EncodeValue(uint64(l)*1e6+uint64(e))); err != nil {
				t.Fatal(err)
			}
		}
	}
	info, err := w.finish()
	if err != nil {
		t.Fatal(err)
	}
	return path, info
}

// TestTableRoundTrip: many keys across many index and filter partitions,
// present, absent and floor lookups, in both layouts, compressed or not.
func TestTableRoundTrip(t *testing.T) {
	for _, layout := range []Layout{Full, Partitioned} {
		for _, compress := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/lz4=%v", layout, compress), func(t *testing.T) {
				o := TableOptions{Layout: layout, Compress: compress, BlockSize: 2048, MetadataBlockSize: 512}
				const ledgers, per = 20, 1500
				path, info := writeTable(t, t.TempDir(), o, ledgers, per)
				if info.Keys != ledgers*per || info.DataBlocks < 100 {
					t.Fatalf("info %+v", info)
				}
				if layout == Partitioned && (info.FilterPartitions < 50 || info.IndexPartitions < 5) {
					t.Fatalf("want many partitions: %+v", info)
				}
				tb, err := openTable(path, 1, testCache(t, 1<<20))
				if err != nil {
					t.Fatal(err)
				}
				defer tb.close()
				if tb.info.Keys != info.Keys || tb.info.FilterPartitions != info.FilterPartitions || tb.layout != layout {
					t.Fatalf("properties %+v, want %+v", tb.info, info)
				}
				tb.info.Smallest, tb.info.Largest = info.Smallest, info.Largest
				r := rand.New(rand.NewPCG(1, 2))
				var p Perf
				for range 20000 {
					l, i := int64(1+r.IntN(ledgers+1)), int64(r.IntN(per+10))
					e := 3*i + int64(r.IntN(3)) // present when ≡ 0 mod 3
					present := l <= ledgers && i < per && e%3 == 0
					k := EncodeKey(l, e)
					v, ok, err := tb.lookup(k, keyHash(k), &p, true)
					if err != nil {
						t.Fatal(err)
					}
					if ok != present {
						t.Fatalf("get (%d, %d): found %v, want %v", l, e, ok, present)
					}
					if ok {
						if got, _ := DecodeValue(v); got != uint64(l)*1e6+uint64(e) {
							t.Fatalf("get (%d, %d) = %d", l, e, got)
						}
					}
					// floor: the greatest present key ≤ k
					fk, fv, fok, err := tb.floor(k, true, &p)
					if err != nil {
						t.Fatal(err)
					}
					wl, we, wok := floorOf(l, e, ledgers, per)
					if fok != wok {
						t.Fatalf("floor (%d, %d): found %v, want %v", l, e, fok, wok)
					}
					if fok {
						gl, ge, _ := DecodeKey(fk)
						gv, _ := DecodeValue(fv)
						if gl != wl || ge != we || gv != uint64(gl)*1e6+uint64(ge) {
							t.Fatalf("floor (%d, %d) = (%d, %d) → %d, want (%d, %d)", l, e, gl, ge, gv, wl, we)
						}
					}
				}
				// absent keys: the filter rules most out (10 bits/key: ~1 %)
				var q Perf
				for i := range 10000 {
					k := EncodeKey(int64(1+i%ledgers), int64(3*(i%per)+1))
					if _, ok, _ := tb.lookup(k, keyHash(k), &q, true); ok {
						t.Fatalf("absent key found")
					}
				}
				if fp := float64(q.BloomHits) / 10000; fp > 0.03 {
					t.Errorf("false positive rate %.3f, want ≈ 0.01", fp)
				}
				// before the first key and after the last
				if _, _, ok, _ := tb.floor(EncodeKey(0, 5), true, nil); ok {
					t.Error("floor below the first key found something")
				}
				fk, _, ok, _ := tb.floor(EncodeKey(ledgers+5, 0), true, nil)
				if l, e, _ := DecodeKey(fk); !ok || l != ledgers || e != 3*(per-1) {
					t.Errorf("floor beyond the last key = (%d, %d) %v", l, e, ok)
				}
				// strict floor of a present key is its predecessor
				fk, _, ok, _ = tb.floor(EncodeKey(2, 0), false, nil)
				if l, e, _ := DecodeKey(fk); !ok || l != 1 || e != 3*(per-1) {
					t.Errorf("strict floor of (2, 0) = (%d, %d) %v", l, e, ok)
				}
			})
		}
	}
}

// floorOf is the model: the greatest key (l', 3i') ≤ (l, e).
func floorOf(l, e int64, ledgers, per int) (int64, int64, bool) {
	if l > int64(ledgers) {
		return int64(ledgers), int64(3 * (per - 1)), true
	}
	if l < 1 {
		return 0, 0, false
	}
	i := min(e/3, int64(per-1))
	if e < 0 {
		i = -1
	}
	if i >= 0 {
		return l, 3 * i, true
	}
	if l == 1 {
		return 0, 0, false
	}
	return l - 1, int64(3 * (per - 1)), true
}

// TestCorruptTable flips every byte region of a small table in turn: an
// open or a read of each is an error wrapping ErrCorrupt that names the
// file, or (for bytes no read covers) succeeds; it never panics and never
// returns a wrong value.
func TestCorruptTable(t *testing.T) {
	for _, layout := range []Layout{Full, Partitioned} {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path, info := writeTable(t, dir, TableOptions{Layout: layout, BlockSize: 512, MetadataBlockSize: 256, Compress: true}, 3, 300)
			good, _ := os.ReadFile(path)
			detected, stride := 0, 7
			if raceEnabled {
				stride = 17
			}
			for off := 0; off < len(good); off += stride {
				bad := bytes.Clone(good)
				bad[off] ^= 0x5a
				p := filepath.Join(dir, "bad.sst")
				os.WriteFile(p, bad, 0o644)
				tb, err := openTable(p, uint64(100+off), testCache(t, 1<<20))
				if err != nil {
					if !errors.Is(err, ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte("bad.sst")) || !bytes.Contains([]byte(err.Error()), []byte("at offset")) {
						t.Fatalf("offset %d: %v", off, err)
					}
					detected++
					continue
				}
				tb.info.Smallest, tb.info.Largest = info.Smallest, info.Largest
				failed := false
				for l := int64(1); l <= 3 && !failed; l++ {
					for i := int64(0); i < 300; i++ {
						k := EncodeKey(l, 3*i)
						v, ok, err := tb.lookup(k, keyHash(k), nil, true)
						if err != nil {
							if !errors.Is(err, ErrCorrupt) {
								t.Fatalf("offset %d: %v", off, err)
							}
							failed = true
							break
						}
						if !ok {
							t.Fatalf("offset %d: key (%d, %d) lost without an error", off, l, 3*i)
						}
						if got, _ := DecodeValue(v); got != uint64(l)*1e6+uint64(3*i) {
							t.Fatalf("offset %d: wrong value %d", off, got)
						}
					}
				}
				if failed {
					detected++
				}
				tb.close()
			}
			if detected == 0 {
				t.Fatal("no corruption detected")
			}
			// truncated files
			for _, n := range []int{0, 10, footerSize - 1, len(good) / 2, len(good) - 1} {
				p := filepath.Join(dir, "short.sst")
				os.WriteFile(p, good[:n], 0o644)
				if _, err := openTable(p, 999, testCache(t, 1<<20)); !errors.Is(err, ErrCorrupt) {
					t.Errorf("truncated to %d bytes: %v", n, err)
				}
			}
		})
	}
}
