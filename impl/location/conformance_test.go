package location_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ledgerbench/ledgerbench/impl/location"
	"github.com/ledgerbench/ledgerbench/impl/location/pebbleindex"
)

// impl opens an index in dir (reopening what is there).
type impl struct {
	name string
	open func(t *testing.T, dir string) location.Index
}

func storeImpl(layout location.Layout) impl {
	return impl{string(layout), func(t *testing.T, dir string) location.Index {
		c, err := location.NewBlockCache(location.CacheOptions{Capacity: 1 << 20, ShardBits: -1})
		if err != nil {
			t.Fatal(err)
		}
		x, err := location.OpenIndex(location.Options{Dir: dir, CreateIfMissing: true, Cache: c,
			Table:        location.TableOptions{Layout: layout, BlockSize: 1024, MetadataBlockSize: 512, Compress: true},
			MemtableSize: 32 << 10, TargetFileSize: 4 << 10, L0Trigger: 3, L1MaxBytes: 8 << 10})
		if err != nil {
			t.Fatal(err)
		}
		return x
	}}
}

var impls = []impl{storeImpl(location.Full), storeImpl(location.Partitioned), {"pebble", func(t *testing.T, dir string) location.Index {
	x, err := pebbleindex.Open(pebbleindex.Options{Dir: dir, CacheSize: 1 << 20, CreateIfMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	return x
}}}

// model is the reference: a map per ledger.
type model struct {
	locs    map[int64]map[int64]uint64
	deleted map[int64]bool
}

func (m *model) last(l int64) (int64, bool) {
	best, ok := int64(-1), false
	for e := range m.locs[l] {
		if e > best {
			best, ok = e, true
		}
	}
	return best, ok
}

func check(t *testing.T, x location.Index, m *model, r *rand.Rand, ledgers int64) {
	t.Helper()
	for range 400 {
		l, e := r.Int64N(ledgers), r.Int64N(3000)
		got, err := x.GetLocation(l, e)
		want, present := m.locs[l][e]
		switch {
		case m.deleted[l]:
			if !errors.Is(err, location.ErrLedgerDeleted) {
				t.Fatalf("get (%d, %d) of a deleted ledger: %v", l, e, err)
			}
		case present && (err != nil || got != want):
			t.Fatalf("get (%d, %d) = %d, %v; want %d", l, e, got, err, want)
		case !present && !errors.Is(err, location.ErrNotFound):
			t.Fatalf("get (%d, %d) = %d, %v; want ErrNotFound", l, e, got, err)
		}
	}
	for l := int64(0); l < ledgers; l++ {
		got, err := x.LastEntry(l)
		want, ok := m.last(l)
		switch {
		case m.deleted[l]:
			if !errors.Is(err, location.ErrLedgerDeleted) {
				t.Fatalf("last entry of deleted ledger %d: %d, %v", l, got, err)
			}
		case ok && (err != nil || got != want):
			t.Fatalf("last entry of %d = %d, %v; want %d", l, got, err, want)
		case !ok && !errors.Is(err, location.ErrNotFound):
			t.Fatalf("last entry of empty ledger %d = %d, %v", l, got, err)
		}
	}
}

// TestIndexConformance runs random batches, deletions, flushes,
// compactions and reopenings against the model, for every implementation.
func TestIndexConformance(t *testing.T) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			dir := t.TempDir()
			x := im.open(t, dir)
			defer func() { x.Close() }()
			r := rand.New(rand.NewPCG(3, 4))
			m := &model{locs: map[int64]map[int64]uint64{}, deleted: map[int64]bool{}}
			const ledgers = 12
			next := map[int64]int64{}
			levels := map[int]bool{}
			for round := range 60 {
				// a flushed write cache: entries of several ledgers, sorted
				var batch []location.Location
				for range 1 + r.IntN(4) {
					l := r.Int64N(ledgers)
					if m.deleted[l] {
						continue
					}
					for range 1 + r.IntN(150) {
						e := next[l]
						next[l] += 1 + r.Int64N(3) // gaps: absent entries
						batch = append(batch, location.Location{Ledger: l, Entry: e, Location: r.Uint64()})
					}
				}
				if r.IntN(5) == 0 && len(m.locs) > 0 { // rewrite some locations (entry log compaction)
					for l, es := range m.locs {
						for e := range es {
							batch = append(batch, location.Location{Ledger: l, Entry: e, Location: r.Uint64()})
							break
						}
					}
				}
				sort.Slice(batch, func(i, j int) bool {
					if batch[i].Ledger != batch[j].Ledger {
						return batch[i].Ledger < batch[j].Ledger
					}
					return batch[i].Entry < batch[j].Entry
				})
				if err := x.AddLocations(batch); err != nil {
					t.Fatal(err)
				}
				for _, b := range batch {
					if m.locs[b.Ledger] == nil {
						m.locs[b.Ledger] = map[int64]uint64{}
					}
					m.locs[b.Ledger][b.Entry] = b.Location
				}
				switch r.IntN(10) {
				case 0:
					l := r.Int64N(ledgers)
					if err := x.DeleteLedger(l); err != nil {
						t.Fatal(err)
					}
					m.deleted[l] = true
					delete(m.locs, l)
				case 1:
					if err := x.Flush(); err != nil {
						t.Fatal(err)
					}
				case 2:
					if err := x.Compact(); err != nil {
						t.Fatal(err)
					}
				case 3: // reopen: the log brings back what was not flushed
					if err := x.Close(); err != nil {
						t.Fatal(err)
					}
					x = im.open(t, dir)
				}
				if round%10 == 9 {
					check(t, x, m, r, ledgers+1)
				}
				if ei, ok := x.(*location.EntryLocationIndex); ok {
					for _, li := range ei.Store().Shape() {
						levels[li.Level] = true
					}
				}
			}
			if _, ok := x.(*location.EntryLocationIndex); ok && (!levels[0] || !levels[1] || !levels[2]) {
				t.Errorf("levels used %v: want flushes to L0 and compactions below", levels)
			}
			t.Logf("levels used: %v", levels)
			check(t, x, m, r, ledgers+1)
			// adding to a deleted ledger is refused
			for l := range m.deleted {
				if err := x.AddLocations([]location.Location{{Ledger: l, Entry: 1 << 40, Location: 1}}); !errors.Is(err, location.ErrLedgerDeleted) {
					t.Fatalf("add to deleted ledger %d: %v", l, err)
				}
				break
			}
			for _, bad := range [][2]int64{{-1, 0}, {0, -1}} {
				if _, err := x.GetLocation(bad[0], bad[1]); !errors.Is(err, location.ErrBadID) {
					t.Errorf("get %v: %v", bad, err)
				}
				if err := x.AddLocations([]location.Location{{Ledger: bad[0], Entry: bad[1]}}); !errors.Is(err, location.ErrBadID) {
					t.Errorf("add %v: %v", bad, err)
				}
			}
		})
	}
}

// TestConcurrentReadsDuringWrites: readers see every location written
// before they started while a writer adds, flushes and compacts.
func TestConcurrentReadsDuringWrites(t *testing.T) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			x := im.open(t, t.TempDir())
			defer x.Close()
			var mu sync.Mutex
			written := int64(0) // entries 0..written-1 of ledger 1 are durable
			done := make(chan struct{})
			var wg sync.WaitGroup
			for g := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(g), 9))
					for {
						select {
						case <-done:
							return
						default:
						}
						mu.Lock()
						n := written
						mu.Unlock()
						if n == 0 {
							continue
						}
						e := r.Int64N(n)
						if got, err := x.GetLocation(1, e); err != nil || got != uint64(e)*7 {
							t.Errorf("get (1, %d) = %d, %v", e, got, err)
							return
						}
						if last, err := x.LastEntry(1); err != nil || last < n-1 {
							t.Errorf("last entry %d, %v; want ≥ %d", last, err, n-1)
							return
						}
					}
				}()
			}
			for i := int64(0); i < 6000; i += 200 {
				var batch []location.Location
				for e := i; e < i+200; e++ {
					batch = append(batch, location.Location{Ledger: 1, Entry: e, Location: uint64(e) * 7})
				}
				if err := x.AddLocations(batch); err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				written = i + 200
				mu.Unlock()
				if i%2000 == 0 {
					if err := x.Compact(); err != nil {
						t.Fatal(err)
					}
				}
			}
			close(done)
			wg.Wait()
		})
	}
}

// TestCrashLeftovers: tables and logs no manifest refers to (a crash
// during a flush or a compaction) and a torn log tail are ignored on open.
func TestCrashLeftovers(t *testing.T) {
	im := impls[1]
	dir := t.TempDir()
	x := im.open(t, dir)
	for i := int64(0); i < 3000; i += 100 {
		var batch []location.Location
		for e := i; e < i+100; e++ {
			batch = append(batch, location.Location{Ledger: 2, Entry: e, Location: uint64(e)})
		}
		if err := x.AddLocations(batch); err != nil {
			t.Fatal(err)
		}
	}
	x.Close()
	// a half-written table and a half-written manifest from a crash
	os.WriteFile(filepath.Join(dir, "999999.sst"), []byte("partial table"), 0o644)
	os.WriteFile(filepath.Join(dir, "MANIFEST.tmp"), []byte("partial"), 0o644)
	// a torn record at the end of the newest log
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	sort.Strings(logs)
	f, _ := os.OpenFile(logs[len(logs)-1], os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte{200, 0, 0, 0, 1, 2, 3, 4, 5})
	f.Close()
	x = im.open(t, dir)
	defer x.Close()
	for e := int64(0); e < 3000; e += 37 {
		if got, err := x.GetLocation(2, e); err != nil || got != uint64(e) {
			t.Fatalf("after the crash: get (2, %d) = %d, %v", e, got, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "999999.sst")); !os.IsNotExist(err) {
		t.Error("the orphan table was not removed")
	}
}

func TestOpenBadInput(t *testing.T) {
	c, _ := location.NewBlockCache(location.CacheOptions{Capacity: 1 << 20, ShardBits: -1})
	if _, err := location.OpenIndex(location.Options{Dir: filepath.Join(t.TempDir(), "missing"), Cache: c}); !errors.Is(err, location.ErrNoDir) {
		t.Errorf("missing dir: %v", err)
	}
	file := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(file, []byte("x"), 0o644)
	if _, err := location.OpenIndex(location.Options{Dir: file, Cache: c}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file as the data directory: %v", err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "MANIFEST"), []byte("0000\n{}"), 0o644)
	if _, err := location.OpenIndex(location.Options{Dir: dir, Cache: c}); !errors.Is(err, location.ErrCorrupt) {
		t.Errorf("corrupt manifest: %v", err)
	}
	if _, err := location.OpenIndex(location.Options{Dir: t.TempDir()}); err == nil {
		t.Error("no cache: no error")
	}
	if _, err := location.NewBlockCache(location.CacheOptions{Capacity: 0}); !errors.Is(err, location.ErrCacheSize) {
		t.Errorf("zero cache: %v", err)
	}
	s, err := location.Open(location.Options{Dir: t.TempDir(), Cache: c})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Apply([][]byte{make([]byte, 15)}, [][]byte{{1}}); !errors.Is(err, location.ErrKeySize) {
		t.Errorf("15-byte key: %v", err)
	}
	if _, err := s.Get(make([]byte, 17), nil); !errors.Is(err, location.ErrKeySize) {
		t.Errorf("17-byte key: %v", err)
	}
}

// TestConcurrentWriters: three writers at once, two sharing a ledger
// (one the even entries, one the odd), one its own; a fourth goroutine
// flushes and compacts, a fifth deletes a ledger written before; two
// readers check what each writer has made durable. Afterwards, and again
// after the index is reopened, every entry holds its own location and the
// deleted ledger is gone.
func TestConcurrentWriters(t *testing.T) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			dir := t.TempDir()
			x := im.open(t, dir)
			const perWriter, batch = 1500, 50
			loc := func(l, e int64) uint64 { return uint64(l)<<32 | uint64(e)*3 + 1 }
			var doomed []location.Location
			for e := int64(0); e < 500; e++ {
				doomed = append(doomed, location.Location{Ledger: 9, Entry: e, Location: loc(9, e)})
			}
			if err := x.AddLocations(doomed); err != nil {
				t.Fatal(err)
			}
			type writer struct {
				ledger, first, stride int64
				done                  atomic.Int64 // entries made durable, in order
			}
			writers := []*writer{{ledger: 1, first: 0, stride: 2}, {ledger: 1, first: 1, stride: 2}, {ledger: 2, first: 0, stride: 1}}
			entry := func(w *writer, i int64) int64 { return w.first + i*w.stride }
			var wg sync.WaitGroup
			errs := make(chan error, 16)
			stop := make(chan struct{})
			for _, w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := int64(0); i < perWriter; i += batch {
						var b []location.Location
						for k := i; k < i+batch; k++ {
							b = append(b, location.Location{Ledger: w.ledger, Entry: entry(w, k), Location: loc(w.ledger, entry(w, k))})
						}
						if err := x.AddLocations(b); err != nil {
							errs <- err
							return
						}
						w.done.Store(i + batch)
					}
				}()
			}
			var side sync.WaitGroup
			side.Add(3)
			go func() { // flushes and compactions
				defer side.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if err := x.Flush(); err != nil {
						errs <- err
						return
					}
					if err := x.Compact(); err != nil {
						errs <- err
						return
					}
				}
			}()
			go func() { // a purge of a ledger written before
				defer side.Done()
				if err := x.DeleteLedger(9); err != nil {
					errs <- err
				}
			}()
			go func() { // a reader of what every writer made durable
				defer side.Done()
				r := rand.New(rand.NewPCG(5, 5))
				for {
					select {
					case <-stop:
						return
					default:
					}
					w := writers[r.IntN(len(writers))]
					n := w.done.Load()
					if n == 0 {
						continue
					}
					e := entry(w, r.Int64N(n))
					if got, err := x.GetLocation(w.ledger, e); err != nil || got != loc(w.ledger, e) {
						errs <- fmt.Errorf("get (%d, %d) = %d, %v; want %d", w.ledger, e, got, err, loc(w.ledger, e))
						return
					}
				}
			}()
			wg.Wait()
			close(stop)
			side.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			check := func(x location.Index, when string) {
				for _, w := range writers {
					for i := int64(0); i < perWriter; i++ {
						e := entry(w, i)
						if got, err := x.GetLocation(w.ledger, e); err != nil || got != loc(w.ledger, e) {
							t.Fatalf("%s: get (%d, %d) = %d, %v", when, w.ledger, e, got, err)
						}
					}
				}
				if last, err := x.LastEntry(1); err != nil || last != 2*perWriter-1 {
					t.Fatalf("%s: last entry of the shared ledger %d, %v; want %d", when, last, err, 2*perWriter-1)
				}
				if _, err := x.GetLocation(9, 7); err == nil {
					t.Fatalf("%s: an entry of the deleted ledger is still there", when)
				}
			}
			check(x, "after the writers")
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
			x = im.open(t, dir)
			defer x.Close()
			check(x, "reopened")
		})
	}
}
