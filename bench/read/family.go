package read

import (
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/ledgerbench/ledgerbench/harness"
	"github.com/ledgerbench/ledgerbench/impl/offload"
)

// Family is the family name.
const Family = "read"

const (
	ledgerBytes = 8 << 20
	batch       = 10
	maxBack     = 256
)

// newCache returns the offset cache of a mode for one handle.
func newCache(mode string, shared *offload.SharedCache) (offload.OffsetCache, error) {
	switch mode {
	case "none":
		return offload.NoCache{}, nil
	case "handle":
		return offload.NewHandleCache(offload.DefaultHandleTTL, nil), nil
	case "shared":
		return shared, nil
	}
	return nil, fmt.Errorf("unknown offsets mode %q", mode)
}

func replay() *harness.Benchmark {
	return &harness.Benchmark{
		Family: Family, Name: "OffloadReplay", Suites: []string{"cache"}, Mode: harness.Throughput,
		Doc: "a shared subscription on an offloaded ledger: 10 new entries, then a replay of 10 entries 10-256 back",
		Params: []harness.Param{
			{Name: "offsets", Values: []string{"none", "handle", "shared"}, Enum: true},
			{Name: "entrySize", Values: []string{"100", "1024"}, Kind: harness.Int},
		},
		OpsPerInvocation: 2 * batch,
		Units:            []harness.UnitInfo{{Unit: "bytes-parsed/op"}},
		Setup: func(t *harness.Trial) error {
			size := t.Int("entrySize")
			if size <= 0 || size > offload.DefaultBlockSize/2 {
				return fmt.Errorf("entrySize %d out of range", size)
			}
			dir, err := os.MkdirTemp("", "ledgerbench-offload-")
			if err != nil {
				return err
			}
			t.OnTeardown(func() error { return os.RemoveAll(dir) })
			r := t.Rand(1)
			n := ledgerBytes / size
			entries := make([][]byte, n)
			for i := range entries {
				e := make([]byte, size)
				for j := range e {
					e[j] = byte(r.Uint32())
				}
				entries[i] = e
			}
			store := &offload.FileStore{Dir: dir}
			if err := offload.Offload(store, "ledger", 1, entries, offload.DefaultBlockSize); err != nil {
				return err
			}
			mode := t.Param("offsets")
			shared := offload.NewSharedCache(offload.DefaultSharedTTL, offload.DefaultSharedSize, nil)
			last := int64(n - 1)
			t.Run(func(w *harness.Worker) (func(), error) {
				cache, err := newCache(mode, shared)
				if err != nil {
					return nil, err
				}
				h, err := offload.Open(store, "ledger", cache)
				if err != nil {
					return nil, err
				}
				w.OnTeardown(h.Close)
				parsed := w.Counter("bytes-parsed/op")
				rng := rand.New(rand.NewPCG(t.Seed(), uint64(w.ID())+100))
				// The cursor starts past a first batch, so there is always
				// something behind it to replay.
				cursor := int64(batch)
				read := func(first, lastEntry int64) {
					got, err := h.Read(first, lastEntry)
					if err != nil {
						panic(err)
					}
					w.Sink(uint64(len(got)) + uint64(got[0].Data[0]))
				}
				read(0, batch-1)
				return func() {
					before := h.Stats.BytesParsed
					if cursor+batch-1 > last { // wrap around: start over
						cursor = batch
						read(0, batch-1)
					}
					read(cursor, cursor+batch-1) // the next entries
					back := min(int64(batch+rng.IntN(maxBack-batch+1)), cursor)
					read(cursor-back, cursor-back+batch-1) // a replay of older ones
					cursor += batch
					parsed.Add(h.Stats.BytesParsed - before)
				}, nil
			})
			return nil
		},
	}
}

func floor() *harness.Benchmark {
	return &harness.Benchmark{
		Family: Family, Name: "ReadFloor", Suites: []string{"cache"}, Mode: harness.Throughput,
		Doc:    "the unavoidable work of returning an entry: copy its bytes from memory",
		Params: []harness.Param{{Name: "entrySize", Values: []string{"100", "1024"}, Kind: harness.Int}},
		Setup: func(t *harness.Trial) error {
			size := t.Int("entrySize")
			src := make([]byte, 1<<20)
			t.Run(func(w *harness.Worker) (func(), error) {
				r := w.Rand()
				for i := range src {
					src[i] = byte(r.Uint32())
				}
				off := 0
				return func() {
					if off+size > len(src) {
						off = 0
					}
					dst := make([]byte, size)
					copy(dst, src[off:off+size])
					off += size
					w.Sink(uint64(dst[0]))
				}, nil
			})
			return nil
		},
	}
}

// Benchmarks returns the family's declarations.
func Benchmarks() []*harness.Benchmark {
	return []*harness.Benchmark{
		replay(), floor(),
		harness.NoopBenchmark(Family, "ReadNoop", "cache"),
	}
}

func init() {
	for _, b := range Benchmarks() {
		harness.Register(b)
	}
}
