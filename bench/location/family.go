package location

import (
	"fmt"
	"os"
	"sync"

	"github.com/ledgerbench/ledgerbench/harness"
	impl "github.com/ledgerbench/ledgerbench/impl/location"
)

// Family is the family name.
const Family = "location"

// Layouts are the layout param's values: this package's store in its two
// table layouts, and Pebble.
var Layouts = []string{string(impl.Full), string(impl.Partitioned), "pebble"}

var params = []harness.Param{
	{Name: "profile", Values: []string{"ci"}, Enum: true, Allowed: []string{"ci", "mid", "nightly", "smoke"}},
	{Name: "layout", Values: Layouts, Enum: true},
	{Name: "cache", Values: Profiles["ci"].Caches, Valid: func(v string) error { _, err := ParseSize(v); return err }},
	{Name: "shardBits", Values: []string{"6"}, Kind: harness.Int},
	{Name: "lz4", Values: []string{"false"}, Kind: harness.Bool},
}

// datasets serializes dataset builds within a process.
var datasets sync.Mutex

// opened is the trial's index over its dataset, as the benchmark bodies
// use it.
type opened struct {
	get   func(ledger, entry int64, p *impl.Perf) (uint64, error)
	last  func(ledger int64, p *impl.Perf) (int64, error)
	cache func() (oversize, flushes int64) // nil when the index has no such cache
	close func() error
	// noPerf: the index fills no Perf (Pebble); no per-get counters.
	noPerf bool
}

// openPebble opens the Pebble index (set by pebble.go).
var openPebble func(t *harness.Trial, root string, p Profile, capacity int64) (*opened, error)

func open(t *harness.Trial) (*opened, Profile, error) {
	p, ok := Profiles[t.Param("profile")]
	if !ok {
		return nil, p, fmt.Errorf("unknown profile %q", t.Param("profile"))
	}
	capacity, err := ParseSize(t.Param("cache"))
	if err != nil {
		return nil, p, err
	}
	root, err := DatasetDir()
	if err != nil {
		return nil, p, err
	}
	layout := t.Param("layout")
	if layout == "pebble" {
		o, err := openPebble(t, root, p, capacity)
		return o, p, err
	}
	datasets.Lock()
	dir, _, err := EnsureDataset(root, p, impl.Layout(layout), t.Param("lz4") == "true")
	datasets.Unlock()
	if err != nil {
		return nil, p, err
	}
	c, err := impl.NewBlockCache(impl.CacheOptions{Capacity: capacity, ShardBits: t.Int("shardBits")})
	if err != nil {
		return nil, p, err
	}
	x, err := impl.OpenIndex(impl.Options{Dir: dir, Cache: c, ReadOnly: true})
	if err != nil {
		return nil, p, err
	}
	// The shape goes to the fork's log (DIR/logs), as the tables of apache/bookkeeper#4909
	// describe theirs.
	var largest int64
	for _, li := range x.Store().Shape() {
		for _, ti := range li.Tables {
			largest = max(largest, ti.FilterBytes)
			fmt.Fprintf(os.Stderr, "location: %s/%s L%d table: %d keys, %d B, %d data blocks, filter %d B in %d partitions, index %d B in %d partitions, top-level %d B\n",
				p.Name, layout, li.Level, ti.Keys, ti.Size, ti.DataBlocks, ti.FilterBytes, ti.FilterPartitions, ti.IndexBytes, ti.IndexPartitions, ti.TopLevelBytes)
		}
	}
	st := c.Stats()
	t.ReportMetric("largest-filter-B", float64(largest))
	t.ReportMetric("shard-B", float64(st.ShardCapacity))
	t.ReportMetric("pinned-B", float64(st.PinnedUsage))
	return &opened{get: x.GetLocationPerf, last: x.LastEntryPerf, cache: c.Counters, close: x.Close}, p, nil
}

// perfCounters reports a get's PerfContext-like counters per op; worker
// 0 also reports the cache's global counters (their per-op mean over all
// workers' ops).
type perfCounters struct {
	filterReads, filterBytes, bytesRead, hits, probes, bloomUseful *harness.Counter
	oversize, flushes                                              *harness.Counter
	cache                                                          func() (int64, int64)
	lastOversize, lastFlushes                                      int64
}

func newPerfCounters(w *harness.Worker, o *opened) *perfCounters {
	if o.noPerf {
		return nil
	}
	c := &perfCounters{
		filterReads: w.Counter("filter-reads/op"), filterBytes: w.Counter("filter-bytes-read/op"),
		bytesRead: w.Counter("bytes-read/op"), hits: w.Counter("cache-hits/op"),
		probes: w.Counter("sst-probes/op"), bloomUseful: w.Counter("bloom-useful/op"),
	}
	if o.cache != nil {
		c.oversize, c.flushes = w.Counter("oversize-inserts/op"), w.Counter("shard-flushes/op")
		if w.ID() == 0 {
			c.cache = o.cache
		}
	}
	return c
}

func (c *perfCounters) add(p *impl.Perf) {
	if c == nil {
		return
	}
	c.filterReads.Add(p.FilterReads)
	c.filterBytes.Add(p.FilterReadBytes)
	c.bytesRead.Add(p.BlockReadBytes)
	c.hits.Add(p.CacheHits)
	c.probes.Add(p.SSTProbes)
	c.bloomUseful.Add(p.BloomMisses)
	if c.cache != nil {
		o, f := c.cache()
		c.oversize.Add(o - c.lastOversize)
		c.flushes.Add(f - c.lastFlushes)
		c.lastOversize, c.lastFlushes = o, f
	}
}

func benchmark(name, doc string, op func(o *opened, p Profile, w *harness.Worker, perf *impl.Perf) error) *harness.Benchmark {
	return &harness.Benchmark{
		Family: Family, Name: name, Suites: []string{"location"}, Mode: harness.Throughput, Goroutines: 2,
		Doc: doc, Params: params,
		Setup: func(t *harness.Trial) error {
			o, p, err := open(t)
			if err != nil {
				return err
			}
			t.OnTeardown(o.close)
			t.Run(func(w *harness.Worker) (func(), error) {
				c := newPerfCounters(w, o)
				return func() {
					var perf impl.Perf
					if err := op(o, p, w, &perf); err != nil {
						panic(err)
					}
					c.add(&perf)
				}, nil
			})
			return nil
		},
	}
}

func init() {
	harness.Register(benchmark("Get", "random getLocation over every (ledger, entry) of the profile",
		func(o *opened, p Profile, w *harness.Worker, perf *impl.Perf) error {
			r := w.Rand()
			l, e := r.Int64N(int64(p.Ledgers)), r.Int64N(int64(p.EntriesPerLedger))
			loc, err := o.get(l, e, perf)
			if err != nil {
				return err
			}
			if loc != LocationOf(l, e) {
				return fmt.Errorf("get (%d, %d) = %d, want %d", l, e, loc, LocationOf(l, e))
			}
			w.Sink(loc)
			return nil
		}))
	harness.Register(benchmark("GetFloor", "getLastEntryInLedger of a random ledger (a floor seek; no filters)",
		func(o *opened, p Profile, w *harness.Worker, perf *impl.Perf) error {
			l := w.Rand().Int64N(int64(p.Ledgers))
			e, err := o.last(l, perf)
			if err != nil {
				return err
			}
			if e != int64(p.EntriesPerLedger-1) {
				return fmt.Errorf("last entry of %d = %d, want %d", l, e, p.EntriesPerLedger-1)
			}
			w.Sink(uint64(e))
			return nil
		}))
	harness.Register(harness.NoopBenchmark(Family, "LocationNoop", "location"))
}
