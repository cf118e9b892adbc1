package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/ledgerbench/ledgerbench/internal/payload"
	"github.com/ledgerbench/ledgerbench/internal/store"
)

// largestUpload is the biggest upload a server accepts by default: as
// many benchmarks as one upload may name, each with as many forks' lines
// as fit in payload.MaxUpload. Its stamp makes its bytes new to a store
// that holds an earlier one (a store keeps the same bytes once).
func largestUpload(stamp int64) payload.File {
	var b bytes.Buffer
	fmt.Fprintf(&b, "machine-id: largest\ngoos: linux\ngoarch: amd64\ncommit: %040d\nupload-stamp: %020d\n", 1, stamp)
	line := func(i, fork int) string {
		return fmt.Sprintf("BenchmarkLargestUploadOfAllowedSize/case=%05d-2 \t 1000000\t %d.%d ns/op\t 16 B/op\t 1 allocs/op\n", i, 100+i%900, fork)
	}
	per := (payload.MaxUpload - 4096) / (store.MaxBenchmarks * len(line(0, 0)))
	for fork := range per {
		for i := range store.MaxBenchmarks {
			b.WriteString(line(i, fork))
		}
	}
	return payload.File{Name: "largest.txt", Data: b.Bytes()}
}

// small is one small upload put beside the largest.
type small struct {
	took time.Duration
	err  error
}

// smallFile is the n-th one-line upload of a small writer, stamped so
// that no earlier upload holds its bytes (the store would take those as
// stored already, and write nothing).
func smallFile(n int, stamp int64) payload.File {
	return payload.File{Name: fmt.Sprintf("small-%d.txt", n),
		Data: fmt.Appendf(nil, "machine-id: small\ncommit: %040d\nupload-stamp: %d\nBenchmarkSmall-2 1000 %d ns/op\n", n, stamp, 100+n)}
}

// putSmalls puts a one-line upload every 50 ms until done is closed.
func putSmalls(ctx context.Context, st *store.Store, done <-chan struct{}) []small {
	var smalls []small
	stamp := time.Now().UnixNano()
	for n := 0; ; n++ {
		select {
		case <-done:
			return smalls
		case <-time.After(50 * time.Millisecond):
		}
		t0 := time.Now()
		_, err := st.Put(ctx, []payload.File{smallFile(n, stamp)}, "")
		smalls = append(smalls, small{time.Since(t0), err})
	}
}

// measureLargest stores the largest upload while a small upload is put
// every 50 ms beside it, and reports how long the large one took and
// how long the small ones waited: the time the large one holds the
// store's write lock.
func measureLargest(ctx context.Context, spec string, w io.Writer) error {
	st, err := store.Open(ctx, spec)
	if err != nil {
		return err
	}
	defer st.Close()
	big := largestUpload(time.Now().UnixNano())
	done := make(chan struct{})
	smallsc := make(chan []small)
	go func() { smallsc <- putSmalls(ctx, st, done) }()
	t0 := time.Now()
	up, err := st.Put(ctx, []payload.File{big}, "")
	took := time.Since(t0)
	close(done)
	smalls := <-smallsc
	if err != nil {
		return fmt.Errorf("the largest upload: %w", err)
	}
	waits := make([]time.Duration, 0, len(smalls))
	failed := 0
	for _, s := range smalls {
		if s.err != nil {
			failed++
		}
		waits = append(waits, s.took)
	}
	slices.Sort(waits)
	fmt.Fprintf(w, "| store | upload | results | Put | small uploads beside it | their wait, median | longest | failed |\n|---|--:|--:|--:|--:|--:|--:|--:|\n")
	med, longest := time.Duration(0), time.Duration(0)
	if len(waits) > 0 {
		med, longest = waits[len(waits)/2], waits[len(waits)-1]
	}
	fmt.Fprintf(w, "| %s | %.1f MiB | %d | %v | %d | %v | %v | %d |\n", backend(spec), float64(len(big.Data))/(1<<20), up.Results,
		took.Round(time.Millisecond), len(smalls), med.Round(time.Millisecond), longest.Round(time.Millisecond), failed)
	return nil
}

// backend names the store spec's database.
func backend(spec string) string {
	if strings.HasPrefix(spec, "sqlite:") {
		return "SQLite"
	}
	return "PostgreSQL"
}
