package location

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	impl "github.com/ledgerbench/ledgerbench/impl/location"
)

// ciDataset builds the CI profile in a layout, in a fresh directory (or
// in LEDGERBENCH_DATA when set, to reuse it across runs).
func ciDataset(t *testing.T, layout impl.Layout) string {
	t.Helper()
	root := os.Getenv("LEDGERBENCH_DATA")
	if root == "" {
		root = t.TempDir()
	}
	dir, _, err := EnsureDataset(root, Profiles["ci"], layout, false)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCIProfileCounters checks the per-get and cache counters on the CI
// profile with an 8 MiB cache of 64 shards (128 KiB each): the full
// layout re-reads its filters on every get, inserts oversized blocks and
// keeps no filter resident; the partitioned layout reads less than 64 KiB
// per get, never inserts an oversized block and pins exactly its top-level
// blocks.
func TestCIProfileCounters(t *testing.T) {
	p := Profiles["ci"]
	gets := 3000
	if testing.Short() || raceEnabled {
		gets = 1000
	}
	for _, layout := range []impl.Layout{impl.Full, impl.Partitioned} {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			c, err := impl.NewBlockCache(impl.CacheOptions{Capacity: 8 << 20, ShardBits: 6})
			if err != nil {
				t.Fatal(err)
			}
			dir := ciDataset(t, layout)
			before := listDir(t, dir)
			x, err := impl.OpenIndex(impl.Options{Dir: dir, Cache: c, ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				x.Close()
				if after := listDir(t, dir); after != before {
					t.Errorf("a read-only open changed the dataset:\n%s\n%s", before, after)
				}
			}()
			if err := x.AddLocations([]impl.Location{{Ledger: 1, Entry: 1 << 40}}); !errors.Is(err, impl.ErrReadOnly) {
				t.Errorf("write to a read-only store: %v", err)
			}
			var largestFilter, topLevel int64
			tables := 0
			for _, li := range x.Store().Shape() {
				for _, ti := range li.Tables {
					largestFilter = max(largestFilter, ti.FilterBytes)
					topLevel += ti.TopLevelBytes
					tables++
				}
			}
			r := rand.New(rand.NewPCG(1, 2))
			var perf impl.Perf
			for range gets {
				l, e := r.Int64N(int64(p.Ledgers)), r.Int64N(int64(p.EntriesPerLedger))
				loc, err := x.GetLocationPerf(l, e, &perf)
				if err != nil || loc != LocationOf(l, e) {
					t.Fatalf("get (%d, %d) = %d, %v", l, e, loc, err)
				}
			}
			st := c.Stats()
			perGet := func(n int64) float64 { return float64(n) / float64(gets) }
			t.Logf("%s: %d tables, largest filter %d B, shard %d B; per get: filter reads %.2f (%.0f B), bytes read %.0f, cache hits %.2f, probes %.2f; oversized inserts %d, shard flushes %d, pinned %d, content %v",
				layout, tables, largestFilter, c.ShardCapacity(), perGet(perf.FilterReads), perGet(perf.FilterReadBytes), perGet(perf.BlockReadBytes),
				perGet(perf.CacheHits), perGet(perf.SSTProbes), st.OversizeInserts, st.ShardFlushes, st.PinnedUsage, st.Content)
			if layout == impl.Full {
				if perGet(perf.FilterReadBytes) < float64(largestFilter)/2 {
					t.Errorf("filter bytes read per get %.0f < half the full filter (%d)", perGet(perf.FilterReadBytes), largestFilter)
				}
				if st.OversizeInserts == 0 {
					t.Error("no oversized inserts")
				}
				if n := st.Content["FilterBlock"][0]; n != 0 {
					t.Errorf("%d filter blocks resident at the end", n)
				}
				if st.PinnedUsage != 0 {
					t.Errorf("pinned usage %d with nothing pinned", st.PinnedUsage)
				}
			} else {
				if b := perGet(perf.BlockReadBytes); b >= 64<<10 {
					t.Errorf("bytes read per get %.0f ≥ 64 KiB", b)
				}
				if st.OversizeInserts != 0 {
					t.Errorf("%d oversized inserts", st.OversizeInserts)
				}
				// two pinned blocks per table, each charged its bytes plus the
				// fixed handle overhead
				if want := topLevel + int64(2*tables*impl.EntryOverhead); st.PinnedUsage != want {
					t.Errorf("pinned usage %d, want the top-level blocks' %d", st.PinnedUsage, want)
				}
			}
		})
	}
}

func TestProfileStream(t *testing.T) {
	p := Profile{Ledgers: 3, EntriesPerLedger: 5, BatchPerLedger: 2}
	next := p.Stream()
	var got [][2]int64
	for {
		k, _, ok := next()
		if !ok {
			break
		}
		l, e, _ := impl.DecodeKey(k)
		got = append(got, [2]int64{l, e})
	}
	want := [][2]int64{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {2, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 2}, {2, 3}, {0, 4}, {1, 4}, {2, 4}}
	if len(got) != len(want) {
		t.Fatalf("%d keys %v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("key %d = %v, want %v (%v)", i, got[i], want[i], got)
		}
	}
	for name, p := range Profiles {
		n := 0
		for _, l := range p.Layers {
			n += l.Keys
		}
		if n != p.Keys() {
			t.Errorf("profile %s: layers hold %d keys of %d", name, n, p.Keys())
		}
	}
	for _, s := range []string{"0", "-1MiB", "MiB", "1TB", ""} {
		if _, err := ParseSize(s); err == nil {
			t.Errorf("ParseSize(%q): no error", s)
		}
	}
	if n, _ := ParseSize("8MiB"); n != 8<<20 {
		t.Errorf("8MiB = %d", n)
	}
}

// listDir is the names, sizes and modification times of dir's files.
func listDir(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := ""
	for _, e := range es {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out += fmt.Sprintf("%s %d %v; ", e.Name(), fi.Size(), fi.ModTime().UnixNano())
	}
	return out
}

// TestEnsureBuilt: a dataset is built once, reused while its recipe is
// the same, rebuilt when the recipe changes, and a failed build leaves
// nothing behind that a later call could take for a dataset.
func TestEnsureBuilt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	builds := 0
	build := func(content string) func(string) error {
		return func(tmp string) error {
			builds++
			return os.WriteFile(filepath.Join(tmp, "data"), []byte(content), 0o644)
		}
	}
	for i, c := range []struct {
		recipe string
		built  bool
	}{{"a", true}, {"a", false}, {"b", true}, {"b", false}} {
		built, err := EnsureBuilt(dir, c.recipe, build(c.recipe))
		if err != nil || built != c.built {
			t.Fatalf("call %d (recipe %s): built %v, %v; want %v", i, c.recipe, built, err, c.built)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "data")); string(got) != c.recipe {
			t.Fatalf("call %d: data %q", i, got)
		}
	}
	if builds != 2 {
		t.Fatalf("%d builds, want 2", builds)
	}
	other := filepath.Join(filepath.Dir(dir), "failed")
	if _, err := EnsureBuilt(other, "x", func(string) error { return errors.New("disk full") }); err == nil {
		t.Fatal("a failed build returned no error")
	}
	if es, _ := os.ReadDir(filepath.Dir(dir)); len(es) != 1 {
		t.Fatalf("a failed build left %d entries beside the dataset", len(es)-1)
	}
}
