package location

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

// FuzzBlock: any bytes given to the block parser and its iterator are an
// error or a well-formed walk, never a panic or an endless loop.
func FuzzBlock(f *testing.F) {
	b := newBlockBuilder(4)
	for i := range 40 {
		b.add(EncodeKey(1, int64(i)), EncodeValue(uint64(i)))
	}
	f.Add(b.finish())
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		bl, err := parseBlock(data)
		if err != nil {
			if !errors.Is(err, errBlock) {
				t.Fatalf("unexpected error type: %v", err)
			}
			return
		}
		it := bl.iter()
		n := 0
		for it.next() {
			if n++; n > len(data) {
				t.Fatal("more entries than bytes")
			}
		}
		it2 := bl.iter()
		it2.seekGE(EncodeKey(1, 7))
		it3 := bl.iter()
		it3.seekLE(EncodeKey(1, 7), true)
		if _, err := parseFilter(data); err != nil && !errors.Is(err, errBlock) {
			t.Fatal(err)
		}
	})
}

// FuzzFooter: a table file's last bytes fuzzed — with a valid checksum so
// the handles it holds get used — open is an error, never a panic.
func FuzzFooter(f *testing.F) {
	f.Add(uint64(0), uint64(10), uint64(20), uint64(5), []byte("prefix"))
	f.Add(uint64(1<<62), uint64(1<<62), uint64(3), uint64(1<<63), []byte{})
	f.Fuzz(func(t *testing.T, mo, ms, io, is uint64, prefix []byte) {
		var ft [footerSize]byte
		binary.LittleEndian.PutUint64(ft[0:], mo)
		binary.LittleEndian.PutUint64(ft[8:], ms)
		binary.LittleEndian.PutUint64(ft[16:], io)
		binary.LittleEndian.PutUint64(ft[24:], is)
		binary.LittleEndian.PutUint32(ft[32:], FormatVersion)
		binary.LittleEndian.PutUint32(ft[36:], crc32.Checksum(ft[:36], castagnoli))
		binary.LittleEndian.PutUint64(ft[40:], tableMagic)
		file := append(bytes.Clone(prefix), ft[:]...)
		c, _ := NewBlockCache(CacheOptions{Capacity: 1 << 20})
		tb, err := newTable(bytes.NewReader(file), nil, int64(len(file)), "fuzz.sst", 1, c)
		if err == nil {
			tb.close()
			t.Fatal("a table without blocks opened")
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error does not wrap ErrCorrupt: %v", err)
		}
	})
}

// FuzzReplayWAL: replaying any bytes as a log never panics, and what it
// returns without error is a prefix of the records of an intact log with
// the fuzzer's bytes appended (a torn tail is dropped, never misread).
func FuzzReplayWAL(f *testing.F) {
	f.Add([]byte{}, uint8(3))
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 7}, uint8(1))
	f.Fuzz(func(t *testing.T, tail []byte, batches uint8) {
		dir := t.TempDir()
		l, err := createWAL(dir, 1)
		if err != nil {
			t.Fatal(err)
		}
		var want [][]byte
		for b := range int(batches % 8) {
			k, v := EncodeKey(int64(b), 1), EncodeValue(uint64(b))
			if err := l.append([][]byte{k}, [][]byte{v}, false); err != nil {
				t.Fatal(err)
			}
			want = append(want, k)
		}
		l.close()
		path := logName(dir, 1)
		fh, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		fh.Write(tail)
		fh.Close()
		var got [][]byte
		err = replayWAL(path, func(k, v []byte) error { got = append(got, append([]byte(nil), k...)); return nil })
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("replay: %v, want nil or ErrCorrupt", err)
		}
		for i := range min(len(got), len(want)) {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("record %d: %x, want %x", i, got[i], want[i])
			}
		}
		if err == nil && len(got) < len(want) {
			t.Fatalf("replayed %d of the %d intact records", len(got), len(want))
		}
	})
}

// FuzzManifest: any bytes as a MANIFEST are a manifest or an error, never
// a panic; a written manifest reads back as written.
func FuzzManifest(f *testing.F) {
	dir := f.TempDir()
	m := &manifest{NextFile: 7, LogNumber: 6, Levels: make([][]fileMeta, numLevels), Layout: Partitioned}
	m.Levels[0] = []fileMeta{{Num: 5, Size: 100, Keys: 3, Smallest: EncodeKey(1, 0), Largest: EncodeKey(1, 2)}}
	if err := writeManifest(dir, m); err != nil {
		f.Fatal(err)
	}
	good, _ := os.ReadFile(filepath.Join(dir, "MANIFEST"))
	f.Add(good)
	f.Add([]byte("0\n{}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, "MANIFEST"), b, 0o644)
		got, found, err := readManifest(d)
		if err == nil && (!found || got == nil) {
			t.Fatalf("no error and no manifest for %q", b)
		}
		if bytes.Equal(b, good) && (err != nil || got.NextFile != 7 || len(got.Levels[0]) != 1) {
			t.Fatalf("the written manifest reads back as %+v, %v", got, err)
		}
	})
}
