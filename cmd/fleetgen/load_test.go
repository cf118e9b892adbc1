package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ledgerbench/ledgerbench/internal/store"
)

// TestLoadBesideTheLargestUploads serves a small fleet's store on
// SQLite to 20 readers and a small writer while the largest upload by
// bytes and the largest by files are posted: every upload is stored,
// every answer is a 200, the home page and /healthz answer within a
// second at the 99th percentile, and no upload holds the write lock for
// 5 s.
func TestLoadBesideTheLargestUploads(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's runtime takes minutes over the two 30 MiB uploads: .ci/run runs this test in a normal build")
	}
	ctx := context.Background()
	c := config{spec: "sqlite:" + filepath.Join(t.TempDir(), "f.db"), machines: 3, benchmarks: 20, night: 20, checkpoints: []float64{1}, seed: 1}
	if _, err := run(ctx, c, io.Discard); err != nil {
		t.Fatal(err)
	}
	phases, err := measureLoad(ctx, c.spec, 20, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	err = writeLoad(&table, c.spec, 20, phases)
	t.Logf("\n%s", &table)
	if err != nil {
		t.Fatal(err)
	}
	if len(phases) != 3 || phases[2].Files != 1000 || phases[1].Bytes < 30<<20 {
		t.Fatalf("phases: %+v", phases)
	}
	for _, p := range phases {
		for path, w := range p.Paths {
			if len(w.Took) == 0 || w.NotOK > 0 {
				t.Errorf("%s: %s: %d answers, %d not 200 (%v)", p.Name, path, len(w.Took), w.NotOK, w.Status)
			}
			if path != smallUpload && w.Quantile(0.99) > time.Second {
				t.Errorf("%s: %s: p99 %v, want under 1 s", p.Name, path, w.Quantile(0.99))
			}
			// The small writer's longest wait is how long an upload held
			// the write lock: 8.5-10 s beside readers served all at once.
			if path == smallUpload && w.Quantile(1) > 5*time.Second {
				t.Errorf("%s: a one-line upload waited %v for the write lock, want under 5 s", p.Name, w.Quantile(1))
			}
		}
	}
	// Both uploads were stored and indexed: their machines' runs.
	st, err := store.Open(ctx, c.spec)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ms, err := st.Machines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]int{}
	for _, m := range ms {
		runs[m.ID] = m.Runs
	}
	if runs["largest"] != 1 || runs["many-files"] != 1000 || runs["small"] == 0 {
		t.Errorf("runs by machine after the load: %v", runs)
	}
}
